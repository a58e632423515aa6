a = [1, 2, 3, 4]
for x in a:
    if x == 2:
        a.remove(x)
print(a)
b = [1, 2, 3]
for x in b[:]:
    b.append(x * 10)
b
