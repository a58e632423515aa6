# expect: refused Forbidden access to dunder attribute: __dict__
class C:
    pass
c = C()
c.__dict__ = {'a': 1}
