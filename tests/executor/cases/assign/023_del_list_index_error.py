# expect: native
a = [1]
del a[5]
