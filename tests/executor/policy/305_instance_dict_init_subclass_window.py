# imports: numpy, numpy.*, functools
# expect: logs in __init_subclass__: object ()
# type.__new__ gives the class it made the class-only lookup of refused dunders once CPython's
# returns, but CPython calls the bases' __init_subclass__ before that: there an instance's
# dict still answered '__array_interface__' (written by cached_property), and numpy made a
# uint8 array over address 4096. The class is checked as it enters the snippet's hands (as
# for __getattr__, policy case 273).
import functools, numpy
def mk(self):
    return {'data': (4096, True), 'shape': (8,), 'typestr': '|u1', 'version': 3}
cp = functools.cached_property(mk)
class Base:
    def __init_subclass__(cls, **kw):
        cp.attrname = '__array_interface__'
        k = cls()
        k.p
        a = numpy.asarray(k)
        print('in __init_subclass__:', a.dtype, a.shape)
class K(Base):
    p = cp
print(type(numpy.asarray(K())).__name__)
