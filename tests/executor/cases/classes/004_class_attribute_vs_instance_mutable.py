class Bag:
    items = []
    def add(self, x):
        self.items.append(x)
a = Bag()
b = Bag()
a.add(1)
b.add(2)
print(Bag.items, a.items is b.items)
class Bag2:
    def __init__(self):
        self.items = []
a2 = Bag2()
a2.items.append(1)
Bag2().items
