# expect: native
def f(a, b):
    return a + b
f(1)
