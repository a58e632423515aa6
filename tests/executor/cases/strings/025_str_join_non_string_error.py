# expect: native
', '.join([1, 2, 3])
