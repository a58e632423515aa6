def f(*args, **kwargs):
    return args, sorted(kwargs.items())
print(f(), f(1, 2), f(a=1), f(1, *[2, 3], x=4, **{'y': 5}))
args = (1, 2)
kw = {'c': 3}
def g(a, b, c):
    return a + b + c
g(*args, **kw)
