# expect: native
d = {'a': 1}
d[('t', 1)]
