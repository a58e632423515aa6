class A:
    def __init__(self):
        self.v = 5
    def get(self):
        return self.v
a = A()
g = a.get
a.v = 7
fns = [a.get, A().get]
(g(), [f() for f in fns])
