class Ver:
    def __init__(self, s):
        self.parts = tuple(int(p) for p in s.split('.'))
        self.s = s
    def __lt__(self, o):
        return self.parts < o.parts
vs = [Ver('1.10'), Ver('1.2'), Ver('1.9.1')]
([v.s for v in sorted(vs)], max(vs).s, min(vs).s)
