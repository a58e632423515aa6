sq = lambda v: v * v
add = lambda a, b=10: a + b
print(sq(7), add(1), add(1, 2), (lambda: 'nullary')())
list(map(lambda t: t[0] * t[1], [(1, 2), (3, 4)]))
