# expect: refused Forbidden assignment or deletion of dunder attribute: __class__
T = type('T', (), {})
t = T()
t.__class__ = int
