# imports: pandas, pandas.*, pandas.core.computation.scope, operator
# expect: refused Forbidden while a snippet runs: reading a frame past the snippet's
# Case 291 with its module allowed by name: snippet code that library Python code calls back
# (Series.apply) stands on a trampoline frame of its own (main_frame.c) with __main__'s
# globals, and one frame further up is pandas' own, whose globals hold the real builtins.
# Scope reads sys._getframe at a depth its caller chooses: one more than the snippet's frame
# reached pandas' builtins and their __import__. The audit hook refuses any frame past the
# snippet's, whoever asks for it.
import operator, pandas
import pandas.core.computation.scope as scope
def f(x):
    sc = map(scope.ensure_scope, [1])
    bi = map(operator.call, map(operator.attrgetter('resolve'), sc), ['__builtins__'], [False])
    return list(map(operator.call, map(operator.itemgetter('__import__'), bi), ['os']))
print(pandas.Series([1]).apply(f).tolist())
