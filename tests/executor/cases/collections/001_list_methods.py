a = [3, 1, 2]
a.append(4)
a.extend([5, 6])
a.insert(0, 0)
print(a, a.pop(), a.pop(0), a)
a.remove(2)
a.sort()
print(a, a.index(3), a.count(1))
a.reverse()
b = a.copy()
b.clear()
print(a, b)
a
