# imports: functools
# expect: native
import functools
def f(x):
    'doc of f'
    return x * 2
@functools.wraps(f)
def g(*a):
    return f(*a)
def h(*a):
    return f(*a)
functools.update_wrapper(h, f, assigned=('__doc__', '__name__', 'extra'), updated=())
f.extra = 'copied'
functools.update_wrapper(h, f, assigned=('extra',), updated=())
(g.__name__, g.__doc__, g.__wrapped__ is f, g(3), h.__name__, h.extra, functools.wraps(f)(h)(4))
