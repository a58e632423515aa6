# expect: native
class P:
    __slots__ = ('x',)
    x = 5
