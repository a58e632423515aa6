d = {'a': 1, 'b': 2, 'c': 3}
del d['b']
print(d)
try:
    del d['zz']
except KeyError as e:
    print('KeyError', e)
d
