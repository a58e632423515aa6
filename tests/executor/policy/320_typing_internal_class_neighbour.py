# imports: typing, collections, dataclasses
# The neighbour of 319: the snippet's classes built on typing's public ones (Generic, Protocol,
# NamedTuple, TypedDict, NewType) are made and their hints read as in CPython.
import typing, collections, dataclasses
T = typing.TypeVar('T')
class Box(typing.Generic[T]):
    def __init__(self, v: T) -> None:
        self.v = v
class HasLen(typing.Protocol):
    def __len__(self) -> int: ...
class P(typing.NamedTuple):
    x: int
    y: 'float' = 0.5
class TD(typing.TypedDict, total=False):
    a: int
@dataclasses.dataclass
class D:
    items: typing.List[int]
    m: typing.Optional[typing.Dict[str, int]] = None
UserId = typing.NewType('UserId', int)
print(Box[int](3).v, P(1), TD(a=1), D([1]), UserId(5), isinstance([], HasLen))
print(typing.get_type_hints(Box.__init__), typing.get_type_hints(D), typing.get_type_hints(P))
