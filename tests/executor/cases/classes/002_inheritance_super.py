class Base:
    def __init__(self, x):
        self.x = x
    def describe(self):
        return 'Base(%d)' % self.x
class Child(Base):
    def __init__(self, x, y):
        super().__init__(x)
        self.y = y
    def describe(self):
        return 'Child:' + super().describe() + ':' + str(self.y)
c = Child(1, 2)
print(c.describe(), isinstance(c, Base), issubclass(Child, Base))
c.x + c.y
