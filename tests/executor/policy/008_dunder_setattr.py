# expect: refused Forbidden access to dunder attribute: __class__
class A:
    pass
class B:
    pass
setattr(A(), '__class__', B)
