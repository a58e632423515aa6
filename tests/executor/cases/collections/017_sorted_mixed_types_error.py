# expect: native
sorted([1, 'a', 2])
