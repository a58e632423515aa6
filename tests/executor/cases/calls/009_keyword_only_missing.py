# expect: native
def f(*, k):
    return k
f()
