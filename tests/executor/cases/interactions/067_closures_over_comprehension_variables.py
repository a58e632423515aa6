fns = [lambda: x for x in range(3)]
gens = [(lambda y=y: y) for y in range(3)]
([f() for f in fns], [g() for g in gens])
