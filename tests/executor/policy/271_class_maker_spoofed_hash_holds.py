# imports: enum
# expect: refused Forbidden: metaclass M defines __eq__, __ne__ or __hash__
# As 269: a snippet class hashing as types.DynamicClassAttribute (named after types, judged by
# its maker) and equal to anything made the snippet its maker: the snippet could hold it and
# change it. Its maker is looked up by identity.
# Now refused earlier: no metaclass compares or hashes its classes otherwise than type
# (class_dunders.c); the record keyed by identity stays behind it, which refused this with
# "Forbidden access to class types.DynamicClassAttribute: module types is not allowed".
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
