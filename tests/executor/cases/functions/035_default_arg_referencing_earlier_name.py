base = 100
def f(a, b=base + 1):
    return a + b
base = 0
f(1)
