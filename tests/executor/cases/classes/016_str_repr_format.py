class P:
    def __init__(self, n):
        self.n = n
    def __str__(self):
        return 'P-str-%d' % self.n
    def __repr__(self):
        return 'P(%d)' % self.n
    def __format__(self, spec):
        return 'P-fmt[' + spec + ']'
p = P(1)
print(p, str(p), repr(p), [p], f'{p}', f'{p!r}', f'{p:xyz}', '{}'.format(p), '%s %r' % (p, p))
p
