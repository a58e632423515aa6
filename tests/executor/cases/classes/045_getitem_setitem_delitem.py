class Grid:
    def __init__(self):
        self.d = {}
    def __getitem__(self, key):
        return self.d.get(key, '.')
    def __setitem__(self, key, v):
        self.d[key] = v
    def __delitem__(self, key):
        del self.d[key]
g = Grid()
g[0, 1] = 'x'
g[2, 2] = 'y'
del g[2, 2]
[[g[r, c] for c in range(3)] for r in range(2)]
