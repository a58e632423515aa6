# expect: refused Forbidden access to dunder attribute: __globals__
def f():
    pass
hasattr(f, '__globals__')
