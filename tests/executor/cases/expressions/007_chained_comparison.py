x = 5
print(1 < x < 10, 1 < x > 10, 0 <= x <= 5 < 6, 1 == 1 < 2 != 3)
calls = []
def f(v):
    calls.append(v)
    return v
print(f(1) < f(0) < f(2), calls)
3 > 2 > 1
