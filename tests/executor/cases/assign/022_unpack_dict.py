d = {'k1': 1, 'k2': 2}
a, b = d
print(a, b)
(k, v), = d.items() if len(d) == 1 else [('only', 0)]
print(k, v)
x, y = d.values()
x + y
