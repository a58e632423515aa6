class Box:
    pass
b = Box()
b.x = 1
b.y = b.x + 1
b.x += 10
print(b.x, b.y)
del b.y
print(hasattr(b, 'y'), hasattr(b, 'x'))
b.x
