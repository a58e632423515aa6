class C:
    xs = [1, 2, 3]
    total = sum(x * 2 for x in xs)
C.total
