a = [1, 2, 3]
a[0], a[2] = a[2], a[0]
i = 0
i, a[i] = 1, 'x'
print(a, i)
a
