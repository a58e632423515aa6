# expect: native
print('a')
try:
    1 + 'a'
except TypeError as e:
    print('TypeError:', e)
'x' * 3 + 'y'
