# expect: refused Forbidden access to dunder attribute: __code__
def f():
    return 1
f.__code__.co_code
