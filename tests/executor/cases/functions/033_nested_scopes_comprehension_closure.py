def f():
    x = 10
    return [x + y for y in range(3)]
f()
