# imports: enum, copy
# An enum whose class body defines __new__ (the enum docs' "When to use __new__()"): enum's
# EnumType.__new__ saves that __new__ as __new_member__ on the new class, for its subclasses to
# make their members with, then puts Enum.__new__ in its place. A snippet's class may not
# define __new_member__, but the value is the class's own __new__, which it may: allowed by
# value (guard_store.c). 280 is the neighbour storing another value.
import copy
import enum

class Coord(enum.Enum):
    def __new__(cls, value, label):
        obj = object.__new__(cls)
        obj._value_ = value
        obj.label = label
        return obj
    X = (1, 'the x axis')
    Y = (2, 'the y axis')

print(Coord.X, Coord(2), Coord.Y.label, copy.deepcopy(Coord.X) is Coord.X)
print([c.name for c in Coord])

class Base(enum.Enum):
    def __new__(cls, value):
        obj = object.__new__(cls)
        obj._value_ = value * 10
        return obj
class Sub(Base):
    A = 1
    B = 2
print(Sub.A.value, Sub(20))
