def counter():
    n = 0
    def bump():
        nonlocal n
        while True:
            n += 1
            yield n
    g = bump()
    next(g)
    next(g)
    return n
counter()
