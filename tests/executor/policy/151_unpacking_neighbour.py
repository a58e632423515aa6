# expect: native
a, (b, *c) = 1, (2, 3, 4)
total = 0
for k, v in {'x': 1, 'y': 2}.items():
    total += v
(a, b, c, total, sorted([{'k': 2}, {'k': 1}], key=lambda d: d['k']))
