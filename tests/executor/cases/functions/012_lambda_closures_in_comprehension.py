adders = [lambda x, n=n: x + n for n in range(3)]
late = [lambda x: x + n for n in range(3)]
([a(10) for a in adders], [l(10) for l in late])
