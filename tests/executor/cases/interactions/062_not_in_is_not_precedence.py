a = [1, 2]
(3 not in a, not 3 in a, a is not None, not a is None, (not 1) == False, 1 not in a == False)
