# imports: dataclasses, enum, functools, re, typing
# Library code still finishes the classes it makes for the snippet while it runs (namedtuple's
# __module__, dataclasses' methods, make_dataclass's, enum's members) and still stores on the
# snippet's classes when the snippet steers it there (typing's aliases, through library code
# such as a dataclass's __init__ run with the alias as self, since the walk refuses stores on
# aliases themselves and update_wrapper writes into none, typing.final,
# runtime_checkable); library classes made at import still work unchanged (re's flags combined).
import collections, dataclasses, enum, functools, re, typing
N = collections.namedtuple('N', 'a b', module='__main__')
M = collections.namedtuple('M', ['a'], rename=True, defaults=[1])
class T(typing.NamedTuple):
    a: int
    b: str = 'x'
U = typing.NamedTuple('U', [('a', int)])
TD = typing.TypedDict('TD', {'a': int})
E = enum.Enum('E', 'A B', module='__main__')
F = enum.Flag('F', 'R W X')
class K:
    pass
class Src:
    x = 1
    y = 2
@dataclasses.dataclass
class SetX:
    x: int
SetX.__init__(typing.Annotated[K, 0], Src.x)
V = typing.TypeVar('V')
class Box(typing.Generic[V]):
    pass
@dataclasses.dataclass
class SetY:
    y: int
SetY.__init__(Box[int], Src.y)
@typing.runtime_checkable
class Proto(typing.Protocol):
    def m(self): ...
@typing.final
class Fin:
    pass
@dataclasses.dataclass(slots=True, frozen=True, order=True)
class D:
    a: int
P = functools.total_ordering(dataclasses.make_dataclass('P', ['x'], order=True))
print(N(1, 2), M(), T(1), U(2), TD(a=1), E.B, F.R | F.W, K.x, Box.y, type(Fin()).__name__)
print(isinstance(K(), Proto), D(1) < D(2), P(1) <= P(2), re.I | re.M, re.compile('a', re.I | re.M).flags)
