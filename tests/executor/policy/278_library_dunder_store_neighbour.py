# imports: pandas, pandas.*, dataclasses, typing, copy, abc
# The stores the stdlib makes on classes it builds or finishes during a run, of dunders a
# snippet's class may not define, still work: dataclasses' fields and frozen slots state,
# abc's __abstractmethods__, copyreg's __slotnames__ cache, typing's Generic, Protocol,
# TypedDict and final; and pandas' delegate_names still stores names that are no dunder.
import abc
import copy
import dataclasses
import typing
import pandas
from pandas.core.accessor import delegate_names, PandasDelegate

@dataclasses.dataclass(frozen=True, slots=True)
class P:
    x: int
    y: int = 2
print(copy.deepcopy(P(1)), dataclasses.fields(P)[0].name)

class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self):
        pass
class Sq(Shape):
    def area(self):
        return 4
print(Sq().area())

class Plain:
    def __init__(self):
        self.a = 1
print(copy.copy(Plain()).a)

T = typing.TypeVar('T')
class Box(typing.Generic[T]):
    pass
class Proto(typing.Protocol):
    def meth(self) -> int: ...
class TD(typing.TypedDict):
    a: int
@typing.final
class Fin:
    pass
print(Box[int], typing.get_args(Box[int]), sorted(TD.__annotations__), Fin)

class D(PandasDelegate):
    def _delegate_method(self, name, *args, **kwargs):
        return 'delegated ' + name
delegate_names(delegate=pandas.DataFrame, accessors=['head'], typ='method')(D)
print(D().head(3))
