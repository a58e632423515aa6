def gens():
    out = []
    for i in range(3):
        def g():
            yield i
        out.append(g())
    return [next(x) for x in out]
gens()
