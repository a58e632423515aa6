class Key:
    def __init__(self, k):
        self.k = k
    def __eq__(self, other):
        return isinstance(other, Key) and self.k == other.k
    def __hash__(self):
        return hash(self.k)
    def __repr__(self):
        return 'Key(%r)' % self.k
s = {Key(1), Key(1), Key(2)}
d = {Key('a'): 1}
d[Key('a')] = 2
print(len(s), d, Key(1) in s, Key(3) in s)
sorted(k.k for k in s)
