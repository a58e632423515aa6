# imports: inspect, functools, operator
# expect: logs seen from a called-back function: ['<module>'] imported: []
# The f_back route to case 310's frame: CPython 3.11 audits no f_back read, so library code
# walking up from a snippet function it called back (inspect.stack) went past the snippet's
# frame to functools' own, and inspect.getmembers read that frame's f_globals; C code took the
# real __import__ out of them and imported os. Library code now sees the stack end at the
# snippet's frame (frame_view.c): f_back answers None there, as at a script's module frame.
import inspect, functools, operator
seen, imported = [], []
@functools.total_ordering
class K:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
    def __lt__(self, o):
        stack = inspect.stack()
        seen.extend(map(operator.attrgetter('function'), stack))
        frames = list(map(operator.itemgetter(0), stack))
        members = map(dict, map(inspect.getmembers, frames[1:]))
        gl = map(operator.itemgetter('f_globals'), members)
        bi = map(operator.itemgetter('__builtins__'), gl)
        imp = map(operator.itemgetter('__import__'), bi)
        imported.extend(map(operator.call, imp, ['os']))
        return self.v < o.v
K(2) > K(1)
print('seen from a called-back function:', seen, 'imported:', imported)
