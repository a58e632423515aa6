a = {'x': 1, 'y': 2}
b = {'y': 2, 'x': 1}
print(a == b, list(a) == list(b), a.keys() == b.keys())
del a['x']
a['x'] = 1
list(a)
