a = [1]
b = a
a += [2]
print(a is b, b)
t = (1,)
u = t
t += (2,)
print(t is u, u)
b
