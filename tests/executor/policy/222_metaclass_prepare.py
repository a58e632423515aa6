# expect: refused Forbidden definition of dunder __prepare__ in class M
# A metaclass's __prepare__ makes the namespace a class body binds into: a mapping whose
# __setitem__ files `fin` under '__del__', or that holds hooks before the body runs.
class NS(dict):
    def __setitem__(self, key, value):
        dict.__setitem__(self, '__del__' if key == 'fin' else key, value)
class M(type):
    @classmethod
    def __prepare__(mcls, name, bases, **kw):
        return NS()
class K(metaclass=M):
    def fin(self):
        print('freed')
k = K()
del k
