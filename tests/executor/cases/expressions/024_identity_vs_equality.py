a = [1, 2]
b = [1, 2]
c = a
print(a == b, a is b, a is c, a is not b)
print(None == None, None is None)
c.append(3)
a
