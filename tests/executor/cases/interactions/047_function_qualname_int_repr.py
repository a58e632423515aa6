# expect: native
def f(a):
    pass
f.__qualname__ = 5
