# imports: inspect, operator, traceback
# expect: logs found: [['run']] RuntimeError("pyfence's run entry was called outside a run") RuntimeError('cannot clear an executing frame') [None] refused: f_globals f_builtins f_code f_back f_locals
# The neighbour of 231 from C code's side: inspect.stack()'s FrameInfo holds the run's <module>
# frame (main_frame.c), and C code takes it out where no value check sees it (map with
# itemgetter), then hands it to library code that reads frames. What they reach: the frame's
# locals are the trampoline's (its one-shot run callback, which refuses to run again), clear()
# is CPython's refusal, getmodule finds none; f_globals, f_builtins, f_code and f_back are
# reachable only by attribute name, which every route refuses (attrgetter, getattr, format
# fields) or the audit hook does (f_back). CPython's stack is the script's own: the case is
# the executor's alone.
import inspect, operator, traceback
frames = list(map(operator.itemgetter(0), inspect.stack()))
infos = list(map(inspect.getargvalues, frames))
local_names = list(map(sorted, map(operator.itemgetter(3), infos)))
runs = list(map(operator.itemgetter('run'), map(operator.itemgetter(3), infos)))
errors = []
for attempt in (lambda: list(map(operator.call, runs)),
                lambda: list(map(operator.methodcaller('clear'), frames))):
    try:
        attempt()
    except RuntimeError as e:
        errors.append(e)
stack = list(map(traceback.extract_stack, frames))
print(stack, list(map(operator.itemgetter(0, 1, 2), map(inspect.getframeinfo, frames))))
refused = []
for name in ('f_globals', 'f_builtins', 'f_code', 'f_back', 'f_locals'):
    try:
        list(map(operator.attrgetter(name), frames))
    except Exception as e:
        refused.append(name if type(e).__name__ == 'InterpreterError' else repr(e))
print('found:', local_names, *map(repr, errors), list(map(inspect.getmodule, frames)),
      'refused:', *refused)
