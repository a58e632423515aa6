x: int = 5
y: list = []
z: str
y.append(x)
print(x, y)
try:
    print(z)
except NameError:
    print('z has no value')
x
