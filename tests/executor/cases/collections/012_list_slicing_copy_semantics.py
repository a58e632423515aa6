a = [[1], [2]]
b = a[:]
b[0].append(99)
b.append([3])
print(a, b)
c = list(a)
c[0] = 'new'
a
