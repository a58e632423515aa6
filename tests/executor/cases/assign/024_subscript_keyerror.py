# expect: native
d = {'a': 1}
print(d['a'])
d['missing']
