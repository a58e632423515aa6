x = 'g'
def f():
    x = 'l'
    return [x for _ in range(2)], [(lambda: x)() for _ in range(1)]
f()
