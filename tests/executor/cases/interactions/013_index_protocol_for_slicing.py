class I:
    def __init__(self, v):
        self.v = v
    def __index__(self):
        return self.v
data = list(range(10))
(data[I(2)], data[I(1):I(4)], 'abcdef'[I(3):], bin(I(5)), range(I(3))[-1])
