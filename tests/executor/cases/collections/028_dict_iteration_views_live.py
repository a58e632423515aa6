d = {'a': 1}
keys = d.keys()
d['b'] = 2
print(list(keys), len(keys), 'b' in keys)
items = d.items()
del d['a']
list(items)
