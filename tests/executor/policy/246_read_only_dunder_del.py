# expect: refused Forbidden assignment or deletion of dunder attribute: __class__
class A:
    pass
a = A()
del a.__class__
