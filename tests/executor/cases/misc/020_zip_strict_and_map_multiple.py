print(list(zip([1, 2], 'ab', strict=True)))
try:
    list(zip([1, 2], 'abc', strict=True))
except ValueError as e:
    print('ValueError:', e)
list(map(pow, [2, 3], [3, 2]))
