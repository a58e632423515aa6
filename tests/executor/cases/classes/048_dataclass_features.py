# imports: dataclasses
# dataclasses: order/frozen, field options, default_factory, __post_init__, asdict,
# astuple, replace, fields, slots and kw_only.
import dataclasses
from dataclasses import dataclass, field, asdict, astuple, replace
@dataclass(order=True, frozen=True)
class Item:
    priority: int
    name: str = field(compare=False)
    tags: tuple = ()
items = sorted([Item(3, 'c'), Item(1, 'a'), Item(2, 'b', ('x',))])
print(items, items[0] < items[1], hash(items[0]) == hash(Item(1, 'zzz')))
try:
    items[0].priority = 9
except dataclasses.FrozenInstanceError as e:
    print('frozen:', e)
@dataclass
class Inv:
    items: list = field(default_factory=list)
    total: float = 0.0
    def __post_init__(self):
        self.total = sum(i.priority for i in self.items)
inv = Inv(items)
print(inv.total, asdict(Inv([Item(1, 'a')])), astuple(Item(5, 'q')), replace(items[0], priority=7))
print([f.name for f in dataclasses.fields(Inv)], dataclasses.is_dataclass(inv), Inv() == Inv())
@dataclass(slots=True, kw_only=True)
class K:
    a: int
    b: int = 2
print(K(a=1), K.__slots__)
