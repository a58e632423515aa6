x = 1
y = x
x = 2
print(x, y)
a = b = c = [0]
a.append(1)
print(a, b, c, a is c)
b
