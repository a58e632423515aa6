d = {'b': 2, 'a': 1, 'c': 3}
for k in d:
    print(k, d[k])
for k, v in d.items():
    print(k, '->', v)
for v in d.values():
    print(v)
sorted(d)
