# imports: pandas, pandas.*, operator
# expect: refused Forbidden access to pandas.core.computation.scope
# In a snippet function that library code calls back (Series.apply), the caller's frame is
# pandas' own, whose globals hold the real builtins: Scope handed them out through C code
# (map, attrgetter, call) that no value check sees, whatever the run's frame holds.
import operator, pandas
import pandas.core.computation.eval as ev
def f(x):
    sc = map(ev.ensure_scope, [0])
    bi = map(operator.call, map(operator.attrgetter('resolve'), sc), ['__builtins__'], [False])
    return list(map(operator.call, map(operator.itemgetter('__import__'), bi), ['os']))
print(pandas.Series([1]).apply(f).tolist())
