def f(a, *, opts=None):
    opts = dict(opts or {})
    opts.setdefault('level', 1)
    return a, opts
print(f(1), f(2, opts={'level': 5}))
f(3, opts={'x': 1})
