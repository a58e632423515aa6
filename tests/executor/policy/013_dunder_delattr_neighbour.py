# expect: native
class A:
    pass
a = A()
a.v = 1
delattr(a, 'v')
hasattr(a, 'v')
