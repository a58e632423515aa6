# expect: native
def f(*a):
    return a
f(*5)
