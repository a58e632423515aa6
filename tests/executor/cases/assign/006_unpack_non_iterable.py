# expect: native
a, b = 5
