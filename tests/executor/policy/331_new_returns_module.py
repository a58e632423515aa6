# imports: collections, copy, json
# expect: refused Forbidden: K.__new__ returning a module object
# collections.UserDict.__copy__ (and UserList's) make the copy as
# self.__class__.__new__(self.__class__) and then run inst.__dict__.update(self.__dict__) in
# collections' own code: a snippet __new__ answering json had json's namespace written with the
# instance's attributes (json.dumps replaced for every later caller), no attribute store made.
import collections, copy, json
class K(collections.UserDict):
    def __new__(cls, *a, **kw):
        return super().__new__(cls) if (a or kw) else json
k = K(real=True)
k.dumps = lambda *a, **kw: 'patched'
copy.copy(k)
print(json.dumps([1, 2]))
