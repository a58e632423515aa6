# expect: refused Forbidden access to dunder attribute: __code__
def f():
    pass
getattr(f, '__code__')
