# expect: refused Forbidden access to dunder attribute: __doc__x__
class A:
    pass
delattr(A, '__doc__x__')
