# expect: refused object has no attribute 'gi_frame'
def g():
    yield 1
getattr(g(), 'gi_frame')
