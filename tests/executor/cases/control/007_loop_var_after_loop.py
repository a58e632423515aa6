for i in range(5):
    pass
print(i)
for ch in 'abc':
    last = ch
print(ch, last)
for k in []:
    pass
try:
    print(k)
except NameError:
    print('k unbound')
i
