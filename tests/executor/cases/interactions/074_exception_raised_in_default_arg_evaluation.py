# expect: native
def f(a=1 / 0):
    return a
