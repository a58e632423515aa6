# expect: native
def f(x):
    return x
f(1, 2, 3)
