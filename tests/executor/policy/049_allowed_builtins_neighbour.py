# expect: native
(len('abc'), abs(-1), sorted([2, 1]), min(3, 2), repr('x'), isinstance(1, int), list(zip('a', 'b')))
