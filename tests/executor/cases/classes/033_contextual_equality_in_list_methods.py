class K:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == getattr(o, 'v', o)
lst = [K(1), K(2), K(3)]
print(lst.index(K(2)), lst.count(K(3)), K(3) in lst, 2 in lst)
lst.remove(K(1))
len(lst)
