a = b, c = 1, 2
print(a, b, c)
x, y = z = 'ab'
print(x, y, z)
a
