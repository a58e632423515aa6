# expect: native
len(5)
