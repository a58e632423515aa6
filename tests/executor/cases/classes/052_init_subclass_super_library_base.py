# imports: abc, typing
# super().__init_subclass__(**kw) in a snippet class whose base is a library's reaches that
# library's hook (typing.Generic's) bound to the new snippet class, as class creation calls
# it; abc.ABC subclasses and their abstract methods work alongside.
import abc, typing
T = typing.TypeVar('T')
class Box(typing.Generic[T]):
    registry = []
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Box.registry.append(cls.__name__)
    def __init__(self, v: T):
        self.v = v
class IntBox(Box[int]):
    pass
class StrBox(Box[str]):
    pass
print(IntBox(1).v, Box.registry, Box[int])
class Shape(abc.ABC):
    def __init_subclass__(cls, sides=0, **kw):
        super().__init_subclass__(**kw)
        cls.sides = sides
    @abc.abstractmethod
    def area(self): ...
class Sq(Shape, sides=4):
    def __init__(self, s):
        self.s = s
    def area(self):
        return self.s ** 2
try:
    Shape()
except TypeError as e:
    print('TypeError', e)
(Sq(3).area(), Sq.sides, isinstance(Sq(1), Shape), Sq.__class__.__name__)
