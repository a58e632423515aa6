class Item:
    def __init__(self, name, qty, price):
        self.name, self.qty, self.price = name, qty, price
    @property
    def value(self):
        return self.qty * self.price
    def __repr__(self):
        return f'Item({self.name!r}, {self.qty}, {self.price})'
class Inventory:
    def __init__(self):
        self.items = {}
    def add(self, item):
        if item.name in self.items:
            self.items[item.name].qty += item.qty
        else:
            self.items[item.name] = item
        return self
    def total(self):
        return sum(i.value for i in self.items.values())
    def low(self, threshold):
        return sorted((i for i in self.items.values() if i.qty < threshold), key=lambda i: i.qty)
inv = Inventory().add(Item('bolt', 100, 0.05)).add(Item('nut', 3, 0.1)).add(Item('gear', 2, 12.5)).add(Item('nut', 1, 0.1))
print(inv.low(5))
round(inv.total(), 2)
