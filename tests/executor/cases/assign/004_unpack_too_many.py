# expect: native
a, b = [1, 2, 3]
