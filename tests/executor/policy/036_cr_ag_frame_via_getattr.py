# expect: refused Forbidden access to introspection attribute: gi_frame
def g():
    yield 1
getattr(g(), 'gi_frame')
