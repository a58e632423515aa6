# expect: native
def f(**kw):
    return kw
f(a=1, **{'a': 2})
