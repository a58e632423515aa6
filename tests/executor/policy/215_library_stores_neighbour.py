# imports: copy, dataclasses, enum, functools, json, typing
# Library code still sets attributes where it should while a snippet runs: on the snippet's
# classes and objects (dataclasses, total_ordering, copy rebuilding a snippet object), and on
# classes its own package makes for the snippet (namedtuple, enum's functional API).
import collections, copy, dataclasses, enum, functools, json, typing
@dataclasses.dataclass(frozen=True)
class D:
    a: int
    b: list = dataclasses.field(default_factory=list)
@functools.total_ordering
class V:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
    def __lt__(self, o):
        return self.v < o.v
class S:
    __slots__ = ('x', 'y')
    def __init__(self):
        self.x, self.y = 1, [2]
class P(typing.NamedTuple):
    a: int
    b: str = 'b'
Color = enum.Enum('Color', 'RED GREEN', module='__main__')
class Shape(enum.Enum):
    SQUARE = 1
    CIRCLE = 2
T = collections.namedtuple('T', 'a b', defaults=[0])
d = copy.deepcopy(D(1, [2]))
s = copy.copy(S())
class Enc(json.JSONEncoder):
    def default(self, o):
        return repr(o)
print(d, s.x, s.y, V(1) <= V(2), P(1), Color.GREEN.value, Shape(2).name, T(1), copy.copy(T(1, 2)))
print(json.dumps({'k': {1, 2} and 3, 'v': [1, 2]}, sort_keys=True, indent=1, cls=Enc))
print(json.dumps([1, 2], separators=(';', ':')), json.dumps([1, 2], sort_keys=True))
