# imports: inspect, functools, operator
# expect: logs seen from a called-back function: ['<module>'] their locals: [['run']]
# The f_back route to case 310's frame: CPython 3.11 audits no f_back read, so library code
# walking up from a snippet function it called back (inspect.stack) went past the snippet's
# frame to functools' own and the run's, and read their locals (inspect.getargvalues) and
# globals (inspect.getmembers, before it was refused: C code took the real __import__ out of
# them and imported os). Library code now sees the stack end at the snippet's frame
# (frame_view.c): f_back answers None there, as at a script's module frame.
import inspect, functools, operator
seen, found = [], []
@functools.total_ordering
class K:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
    def __lt__(self, o):
        stack = inspect.stack()
        seen.extend(map(operator.attrgetter('function'), stack))
        frames = map(operator.itemgetter(0), stack)
        found.extend(map(sorted, map(operator.itemgetter(3), map(inspect.getargvalues, frames))))
        return self.v < o.v
K(2) > K(1)
print('seen from a called-back function:', seen, 'their locals:', found)
