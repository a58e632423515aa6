x = 1
y = 2
del x
print('y' in dir() if False else y)
try:
    print(x)
except NameError:
    print('x is gone')
y
