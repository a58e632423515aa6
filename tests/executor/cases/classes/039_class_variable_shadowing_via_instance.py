class C:
    n = 0
    def inc(self):
        self.n += 1
c = C()
c.inc()
c.inc()
(c.n, C.n)
