# expect: refused Forbidden assignment or deletion of dunder attribute: __class__
class A:
    pass
class B:
    pass
setattr(A(), '__class__', B)
