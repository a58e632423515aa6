# expect: native
def f(a, /):
    return a
f(a=1)
