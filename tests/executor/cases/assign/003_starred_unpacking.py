first, *rest = [1, 2, 3, 4]
print(first, rest)
*init, last = range(5)
print(init, last)
a, *mid, z = 'hello'
print(a, mid, z)
x, *y = [1]
print(x, y)
head, *_ = 'ab'
mid
