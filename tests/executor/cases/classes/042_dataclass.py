# imports: dataclasses
from dataclasses import dataclass, field
@dataclass
class Item:
    name: str
    price: float = 0.0
    tags: list = field(default_factory=list)
i = Item('pen', 1.5)
j = Item('pen', 1.5)
print(i, i == j)
i.tags.append('x')
(i.tags, j.tags, Item('a') < Item('b') if False else 'unordered')
