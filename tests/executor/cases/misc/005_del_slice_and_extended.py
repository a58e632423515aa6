a = list(range(10))
del a[2:5]
del a[::2]
b = {'x': 1, 'y': 2}
del b['x'], a[0]
(a, b)
