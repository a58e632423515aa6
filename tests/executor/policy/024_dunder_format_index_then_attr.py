# expect: refused Forbidden access to dunder attribute: __globals__
def f():
    pass
'{0[0].__globals__}'.format([f])
