class Counter:
    def __init__(self):
        self.n = 0
    def tick(self):
        self.n += 1
        return self.n
c = Counter()
c.tick()
# ---
c.tick()
c.tick()
# ---
(c.n, type(c).__name__, isinstance(c, Counter))
