def f(a, b, c=3):
    return (a, b, c)
print(f(1, 2), f(1, 2, 4), f(1, c=5, b=6), f(b=1, a=2))
f(*[7, 8])
