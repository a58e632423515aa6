# imports: numbers, typing
# expect: refused Forbidden: setting __hash__ of class Mix, a metaclass or a base of one
# 333 by a store after the metaclass is made: CPython gives the metaclass its base's new
# __hash__ (and __eq__) then.
import numbers, typing
class Mix:
    pass
class M(Mix, type(typing.Protocol)):
    pass
Mix.__hash__ = lambda cls: hash(float)
