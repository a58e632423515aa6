# expect: refused Forbidden access to dunder attribute: __globals__
def f():
    pass
f.__globals__
