# expect: native
t = (1, 2)
t[0] = 5
