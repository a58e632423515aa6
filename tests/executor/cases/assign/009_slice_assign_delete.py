a = list(range(10))
a[::2] = ['e'] * 5
print(a)
del a[1::2]
print(a)
b = list(range(6))
b[1:4] = []
print(b)
del b[0]
b
