a = 1
print(1 < 2, 2 <= 2, 3 > 4, 4 >= 5, 1 == 1, 1 != 2)
print('a' < 'b', [1, 2] < [1, 3], (1, 2) == (1, 2), None is None, a is not None)
print(3 in [1, 2, 3], 'x' not in 'abc', 1 in {1: 2})
[1] == [1.0]
