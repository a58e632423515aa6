class M:
    def __init__(self, v):
        self.v = v
    def __add__(self, o):
        if isinstance(o, M):
            return M(self.v + o.v)
        return NotImplemented
    def __radd__(self, o):
        return M(self.v + o)
    def __repr__(self):
        return 'M(%r)' % self.v
(M(1) + M(2), 5 + M(1), sum([M(1), M(2)], M(0)), sum([M(3)]))
