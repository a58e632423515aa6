def f():
    rest = [2, 3]
    return 1, *rest
d = {(1, 2): 'pair'}
t = (1, 2)
(f(), d[t], d[1, 2])
