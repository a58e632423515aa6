# expect: native
class P:
    @property
    def v(self):
        return 1
p = P()
p.v = 2
