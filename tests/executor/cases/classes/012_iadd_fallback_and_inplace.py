class Acc:
    def __init__(self):
        self.v = []
    def __iadd__(self, x):
        self.v.append(x)
        return self
class Plain:
    def __init__(self, n):
        self.n = n
    def __add__(self, o):
        return Plain(self.n + o)
a = Acc()
a_id = a
a += 1
a += 2
p = Plain(1)
q = p
p += 5
(a.v, a is a_id, p.n, q.n, p is q)
