class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y)
    def __mul__(self, k):
        return Vec(self.x * k, self.y * k)
    def __rmul__(self, k):
        return self * k
    def __neg__(self):
        return Vec(-self.x, -self.y)
    def __abs__(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
    def __lt__(self, o):
        return abs(self) < abs(o)
    def __repr__(self):
        return f'Vec({self.x}, {self.y})'
v = Vec(3, 4)
print(v + Vec(1, 1), v * 2, 2 * v, -v, abs(v), v < Vec(10, 0), sorted([Vec(5, 5), v]))
repr(v)
