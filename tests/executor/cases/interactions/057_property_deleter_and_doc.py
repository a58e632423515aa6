class P:
    def __init__(self):
        self._v = 1
    @property
    def v(self):
        'the v'
        return self._v
    @v.deleter
    def v(self):
        self._v = None
p = P()
del p.v
(p._v, P.v.__doc__)
