class Tree:
    def __init__(self, v, kids=()):
        self.v, self.kids = v, kids
    def walk(self):
        yield self.v
        for k in self.kids:
            yield from k.walk()
    def __iter__(self):
        return self.walk()
t = Tree(1, [Tree(2, [Tree(3)]), Tree(4)])
print(list(t.walk()))
[v * 10 for v in t]
