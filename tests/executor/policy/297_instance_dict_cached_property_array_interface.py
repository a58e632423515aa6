# imports: numpy, numpy.*, functools
# expect: logs made: object ()
# The same through numpy: cached_property put a dict naming raw memory (address 4096) under
# '__array_interface__' in the instance dict, and numpy.asarray read it as the object's array
# interface and made a uint8 array over that memory. The instance dict no longer answers the
# hook: numpy makes a 0-d object array holding k, as for any object.
import functools, numpy
def mk(self):
    return {'data': (4096, True), 'shape': (8,), 'typestr': '|u1', 'version': 3}
cp = functools.cached_property(mk)
class K:
    p = cp
cp.attrname = '__array_interface__'
k = K()
print(k.p['shape'])
a = numpy.asarray(k)
print('made:', a.dtype, a.shape)
