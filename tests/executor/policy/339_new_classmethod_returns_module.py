# imports: collections, copy, json
# expect: refused Forbidden: K.__new__ returning a module object
# 331 with __new__ as a class method: the check looked for the snippet's function only as a
# static method's, so a classmethod __new__ answered json to UserDict.__copy__, which wrote
# json's namespace (json.dumps replaced for every later caller).
import collections, copy, json
class K(collections.UserDict):
    @classmethod
    def __new__(cls, *a, **kw):
        return object.__new__(cls) if (len(a) > 1 or kw) else json
k = K(real=True)
k.dumps = lambda *a, **kw: 'patched'
copy.copy(k)
print(json.dumps([1, 2]))
