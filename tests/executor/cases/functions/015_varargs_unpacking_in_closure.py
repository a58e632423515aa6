def partial(fn, *pre, **kpre):
    def call(*args, **kw):
        return fn(*pre, *args, **{**kpre, **kw})
    return call
def show(*a, **k):
    return a, sorted(k.items())
p = partial(show, 1, 2, x=1)
print(p(3, y=2), p(x=9))
p()
