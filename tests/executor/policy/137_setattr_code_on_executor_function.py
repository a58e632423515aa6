# expect: refused Forbidden access to dunder attribute: __code__
def f():
    return 1
def g():
    return 2
setattr(f, '__code__', getattr(g, '__code__', None))
