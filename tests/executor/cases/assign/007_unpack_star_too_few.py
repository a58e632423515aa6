# expect: native
a, b, *c = [1]
