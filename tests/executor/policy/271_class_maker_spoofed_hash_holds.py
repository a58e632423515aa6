# imports: enum
# expect: refused Forbidden access to class types.DynamicClassAttribute: module types is not allowed
# As 269: a snippet class hashing as types.DynamicClassAttribute (named after types, judged by
# its maker) and equal to anything made the snippet its maker: the snippet could hold it and
# change it. Its maker is looked up by identity.
import enum
hs = list(map(hash, enum.property.__mro__))
class M(type):
    def __hash__(cls):
        return hs[1]
    __eq__ = bool
class X(metaclass=M):
    pass
D = enum.property.__bases__[0]
D.pwned = 42
print('stored:', D.pwned)
