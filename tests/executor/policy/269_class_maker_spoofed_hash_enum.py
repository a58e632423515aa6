# imports: enum, functools, typing
# expect: refused Forbidden: metaclass M defines __eq__, __ne__ or __hash__
# The record of which module made each class was a dict keyed by weakrefs, which hash and
# compare as their referents: a snippet metaclass (based on enum's) with __hash__ returning
# hash(enum.Enum) and __eq__ = bool (no snippet code runs in the comparison) made enum.Enum's
# lookup find the snippet's enum class's entry, made by enum's code: enum.Enum became a class
# enum made during the run, which enum's own code (typing.Annotated's __setattr__ forwarding)
# could then change. The record is keyed by identity.
# Now refused earlier: no metaclass compares or hashes its classes otherwise than type
# (class_dunders.c); the record keyed by identity stays behind it, which refused this with
# "Forbidden while a snippet runs: enum's code setting attribute 'foo' of class enum.Enum".
import enum, functools, typing
h = hash(enum.Enum)
class M(enum.EnumType):
    def __hash__(cls):
        return h
    __eq__ = bool
class E(enum.Enum, metaclass=M):
    A = 1
print(E.A.value)
class Src:
    foo = 1
functools.update_wrapper(typing.Annotated[enum.Enum, 0], Src, assigned=('foo',), updated=())
print('enum.Enum.foo =', enum.Enum.foo)
