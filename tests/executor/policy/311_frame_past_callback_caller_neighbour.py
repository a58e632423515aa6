# imports: functools, enum, collections
# The neighbour of 310: library code called from snippet code that a library called back reads
# its caller's frame down to the snippet's own, which says __main__ (namedtuple:
# sys._getframe(1); Enum's functional API: sys._getframe(2)), as a script's function would.
import functools, enum, collections
made = []
@functools.total_ordering
class K:
    def __init__(self, v):
        self.v = v
    def __eq__(self, other):
        return self.v == other.v
    def __lt__(self, other):
        made.append(collections.namedtuple('P', 'x').__module__)
        made.append(enum.Enum('E', 'A B').__module__)
        return self.v < other.v
print(K(2) > K(1), K(1) >= K(3), made)
