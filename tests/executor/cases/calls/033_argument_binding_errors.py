# Argument binding errors word what CPython says: a keyword-only argument with a default is
# never reported missing, nor are positional-only ones passed by keyword into **kw.
def f(a, b=2, /, c=3, *, d, e=5, **kw):
    return a, b, c, d, e, kw
def g(x, y):
    return x + y
class C:
    def m(self, a):
        return a
    @staticmethod
    def s(a):
        return a
tests = [
    lambda: f(1, d=4),
    lambda: f(1, 2, 3, 4),
    lambda: f(1),
    lambda: f(a=1, d=2),
    lambda: f(1, d=1, d2=2, c=9),
    lambda: g(1),
    lambda: g(1, 2, 3),
    lambda: g(1, x=2),
    lambda: g(1, z=2),
    lambda: g(),
    lambda: C().m(),
    lambda: C().m(1, 2),
    lambda: C.m(1),
    lambda: C.s(),
    lambda: g(*[1], **{'y': 2, 'y2': 3}),
    lambda: (lambda *, k: k)(1),
    lambda: (lambda a, b, c: 0)(1),
    lambda: (lambda a, *, b, c: 0)(1),
    lambda: g(**{1: 2}),
    lambda: g(*5),
    lambda: g(**[1]),
]
for t in tests:
    try:
        print(t())
    except TypeError as e:
        print('TypeError:', e)
