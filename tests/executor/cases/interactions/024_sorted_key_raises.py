# expect: native
sorted([1, 2, 'x'], key=lambda v: v + 1)
