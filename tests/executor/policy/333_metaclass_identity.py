# imports: numbers, typing
# expect: refused Forbidden: metaclass M defines __eq__, __ne__ or __hash__
# ABCMeta caches subclass answers in sets of weakrefs, which hash and compare as their classes:
# a class whose metaclass (based on typing's _ProtocolMeta, an ABCMeta) hashed as float and
# compared equal to anything, once cached as a numbers.Integral, made isinstance(1.5,
# numbers.Integral) True for every library in the run.
import numbers, typing
armed = [False]
class M(type(typing.Protocol)):
    def __eq__(cls, other):
        return armed[0] or cls is other
    def __hash__(cls):
        return hash(float)
class Liar(numbers.Integral, metaclass=M):
    pass
