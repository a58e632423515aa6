# imports: collections, collections.*, numbers
# expect: refused Forbidden access to abstract base class bookkeeping attribute: _abc_impl
# A snippet subclass of a library ABC given another ABC's _abc_data (an _abc object: not
# callable, so a value it could hold): _abc's C code trusts cls._abc_impl, so asking Mapping
# about int walked Mapping's subclasses down to the snippet's, whose registry was now
# numbers.Integral's, and filed int in Mapping's own cache: every int a Mapping for every
# library (as in case 275). ABCMeta's _abc_* bookkeeping is refused by name, read or set.
import collections.abc, numbers
class Sub(collections.abc.Mapping):
    pass
Sub._abc_impl = numbers.Integral._abc_impl
print(isinstance(5, collections.abc.Mapping))
