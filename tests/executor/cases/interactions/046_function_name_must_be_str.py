def f(a):
    pass
try:
    f.__name__ = None
except TypeError as e:
    print('TypeError:', e)
try:
    f.__qualname__ = 5
except TypeError as e:
    print('TypeError:', e)
f.__name__ = 'renamed'
(f.__name__, repr(f).startswith('<function f at') or repr(f))
