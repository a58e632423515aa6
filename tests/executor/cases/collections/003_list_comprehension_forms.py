print([x * x for x in range(6)])
print([x for x in range(20) if x % 3 == 0 if x % 2 == 0])
print([(x, y) for x in range(3) for y in range(x)])
print([[row[i] for row in [[1, 2], [3, 4]]] for i in range(2)])
[c.upper() for c in 'abc' if c != 'b']
