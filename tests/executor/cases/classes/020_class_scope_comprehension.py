class C:
    n = 3
    vals = [i for i in range(n)]
    try:
        bad = [n for i in range(2)]
    except NameError as e:
        err = 'NameError'
(C.vals, C.err)
