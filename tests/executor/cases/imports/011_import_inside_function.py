def root(x):
    import math
    return math.sqrt(x)
print(root(81))
try:
    print(math.sqrt(4))
except NameError:
    print('math not global')
root(2)
