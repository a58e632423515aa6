d = {'a': 1}
d['b'] = 2
d.update({'c': 3}, d2=4)
print(d, d.get('z'), d.get('z', 0), d.setdefault('e', 5), d.pop('a'), d.pop('zz', None))
print(list(d.keys()), list(d.values()), list(d.items()), len(d), 'b' in d)
print(d.popitem(), d)
d2 = dict.fromkeys('xy', 0)
d2 | {'z': 9}
