class O: pass
o = O()
d = {}
for o.attr in [1, 2]:
    pass
for d['k'] in 'xy':
    pass
print(o.attr, d)
lst = [0, 0]
for i, lst[i] in enumerate('ab'):
    pass
lst
