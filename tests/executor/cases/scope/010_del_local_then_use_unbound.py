# expect: native
def f():
    v = 1
    del v
    return v
f()
