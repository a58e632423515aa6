# expect: refused Forbidden definition of dunder __del__ in class V
# A metaclass called with three arguments: the namespace is checked before its own code sees it.
class M(type):
    pass
def fin(self):
    print('freed')
V = M('V', (), {'__del__': fin})
v = V()
del v
