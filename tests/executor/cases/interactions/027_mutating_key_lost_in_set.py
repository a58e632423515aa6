class Mut:
    def __init__(self, v):
        self.v = v
    def __hash__(self):
        return hash(self.v)
    def __eq__(self, o):
        return self.v == o.v
m = Mut(1)
s = {m}
m.v = 2
(m in s, Mut(1) in s, Mut(2) in s, len(s))
