# expect: native
class A:
    pass
a = A()
setattr(a, 'v', 5)
a.v
