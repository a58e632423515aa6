# imports: functools, copy
# expect: logs copy: True 1 True; deepcopy of k2: TypeError
# A class with __getattr__ (its own checking dispatcher, class_getattr.c) asked the instance
# dict first too: cached_property's cache under '__deepcopy__' made copy.deepcopy call the
# snippet's hook, whatever __getattr__ answers. The class alone answers: copy takes its
# ordinary path (object's __reduce_ex__, whose state holds the snippet's function, which the
# executor's functions cannot be deep-copied as). A cached entry under a name the snippet may
# store itself ('__wrapped__') still answers, and is copied as state.
import functools, copy
def mk(self):
    def dc(memo):
        print('snippet hook ran as __deepcopy__')
        return 'hooked'
    return dc
cp = functools.cached_property(mk)
class K:
    p = cp
    def __init__(self):
        self.x = 1
    def __getattr__(self, name):
        raise AttributeError(name)
cp.attrname = '__wrapped__'
k = K()
w = k.p
cp.attrname = '__deepcopy__'
k2 = K()
k2.p
d = copy.copy(k)
try:
    r = copy.deepcopy(k2)
except Exception as e:
    r = type(e).__name__
print(f'copy: {isinstance(d, K)} {d.x} {d.__wrapped__ is w}; deepcopy of k2: {r}')
