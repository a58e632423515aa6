# expect: native
lst = [1, 2, 3]
lst[10]
