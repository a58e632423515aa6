# expect: native
d = {}
d[[1, 2]] = 3
