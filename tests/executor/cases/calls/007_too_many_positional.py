# expect: native
def f(a):
    return a
f(1, 2)
