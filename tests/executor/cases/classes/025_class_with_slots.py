class P:
    __slots__ = ('x', 'y')
    def __init__(self, x, y):
        self.x = x
        self.y = y
p = P(1, 2)
try:
    p.z = 3
except AttributeError as e:
    print('AttributeError')
p.x + p.y
