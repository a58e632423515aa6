# expect: native
x = None
x + 1
