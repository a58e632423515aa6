# imports: copy
# The neighbour of 233-236: __getattr__ proxies still answer every ordinary name, and dunders of
# the class allow-list, as in CPython; lookups normal lookup finds (__class__, __dict__ of the
# library's own code) are not affected; a missing name raises the proxy's own AttributeError.
import copy
class Proxy:
    def __init__(self, target):
        self._target = target
    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(f'{type(self).__name__!r} proxies no {name!r}')
        print('proxied', name)
        return getattr(self._target, name)
class Data:
    def __init__(self):
        self.items = [1, 2]
    def total(self):
        return sum(self.items)
p = Proxy(Data())
print(p.items, p.total(), type(p).__name__)
c = copy.deepcopy(p)
print(type(c).__name__, c.items, c._target.items is p._target.items)
try:
    p.missing
except AttributeError as e:
    print('missing:', e)
print(hasattr(p, 'total'), hasattr(p, 'nope'), getattr(p, 'nope', 'default'))
