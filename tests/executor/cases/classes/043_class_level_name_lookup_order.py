y = 'module'
def f():
    y = 'function'
    class C:
        a = y
        y = 'class'
        b = y
    return C.a, C.b
f()
