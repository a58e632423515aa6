def f(**kw):
    return list(kw)
f(z=1, a=2, m=3)
