def f():
    return 1
first = f()
def f():
    return 2
(first, f())
