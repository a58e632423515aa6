# imports: enum
# expect: refused Forbidden while a snippet runs: enum's code setting dunder '__new_member__' of class Planet
# As 279, but the snippet's base's __init_subclass__ puts another function under the new
# class's __new__ before enum saves the body's __new__ as __new_member__: the value enum stores
# is no longer the class's own __new__, and a value-blind allow-list ((enum, __new_member__))
# let it through. guard_store.c allows enum's __new_member__ only as the class's own __new__.
import enum

def other(cls, v):
    obj = object.__new__(cls)
    obj._value_ = v
    return obj

class Base(enum.Enum):
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.__new__ = other

class Planet(Base):
    def __new__(cls, mass):
        obj = object.__new__(cls)
        obj._value_ = mass
        return obj
    EARTH = 5
print(Planet.EARTH)
