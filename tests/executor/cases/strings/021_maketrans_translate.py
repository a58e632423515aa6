table = str.maketrans('abc', 'xyz', 'd')
print('aabbccdd'.translate(table))
print('hello'.translate({ord('l'): 'L'}))
'abc'.translate(str.maketrans({'a': None}))
