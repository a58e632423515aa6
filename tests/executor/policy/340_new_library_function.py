# imports: collections, json, statistics
# expect: refused Forbidden: K.__new__ must be a function
# 332 with a library's Python function as __new__: statistics.mode(K) answers what K's
# metaclass iterates (json, say), and no check sees a library function's answer. Only the
# snippet's functions, and the ones enum and namedtuple put there, answer a class's __new__.
import collections, json, statistics
class K(collections.UserDict):
    __new__ = staticmethod(statistics.mode)
