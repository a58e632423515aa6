def f(a=[i * 2 for i in range(3)]):
    return a
f()
