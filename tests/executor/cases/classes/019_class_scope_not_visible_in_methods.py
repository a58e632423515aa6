x = 'global'
class C:
    x = 'class'
    def m(self):
        return x
    y = x + '!'
(C().m(), C.y)
