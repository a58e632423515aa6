# expect: refused Forbidden access to dunder attribute: __class__
T = type('T', (), {})
t = T()
t.__class__ = int
