# imports: functools
# functools.update_wrapper(C, f, updated=()) on a class (with the default updated=('__dict__',)
# it fails natively: a class's __dict__ is a read-only mappingproxy) stores f's __module__,
# __name__, __qualname__, __doc__, __annotations__ on C, then C.__wrapped__ = f. __name__
# (the class's own name, type's getset, no hook) and __wrapped__ (followed by inspect.unwrap
# and signature) are no names a class body may bind, but the snippet may set both on its own
# class itself (the walk's store allow-list, policy.c): functools may too (guard_store.c).
import functools

class C:
    def __init__(self, a):
        self.a = a
def make(a):
    'Make a C.'
    return C(a)
functools.update_wrapper(C, make, updated=())
print(C.__name__, C.__qualname__, C.__doc__, C.__wrapped__ is make)
print(C(3).a, type(C(3)).__name__)

class D:
    pass
D.__name__ = 'Renamed'
D.__wrapped__ = make
print(D.__name__, D.__wrapped__ is make)
