# imports: pprint, dataclasses, collections
# pprint's printers still format what pprint files them for (the executor's versions refuse
# anything else, policy cases 354 and 357): containers, their subclasses, collections' types,
# a dataclass instance, nested.
import pprint, dataclasses, collections
@dataclasses.dataclass
class P:
    x: int
    tags: list
class MyDict(dict):
    pass
data = {'p': P(1, ['a', 'b' * 30]), 'c': collections.Counter('hello'),
        'o': collections.OrderedDict(a=1), 'd': collections.deque(range(12)),
        'm': MyDict(k=(1, 2)), 'dd': collections.defaultdict(list, {'z': [0]}),
        's': {3, 1, 2}, 'f': frozenset('ab'), 'b': b'bytes' * 8}
pprint.pprint(data, width=40)
print(pprint.pformat(collections.ChainMap({'a': 1}, {'b': 2}), width=10))
print(pprint.PrettyPrinter._pprint_dict.__name__)
# a defaultdict wider than the line: pprint's default-dict printer calls the dict printer itself
pprint.pprint(collections.defaultdict(list, {'key' * 8 + str(i): list(range(8)) for i in range(3)}),
              width=30)
