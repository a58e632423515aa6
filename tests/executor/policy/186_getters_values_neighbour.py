# imports: operator, string
# expect: native
# The checked getters still return what CPython's return: several names, dotted paths, method
# arguments, called directly and by C code; Formatter's fields and values.
import operator, string, statistics, collections
class P:
    def __init__(self):
        self.inner = self
        self.value = 7
    def add(self, a, b=0):
        return a + b
print(operator.attrgetter('inner.inner.value', 'value')(P()), operator.attrgetter('value')(P()))
print(list(map(operator.attrgetter('real', 'imag'), [1 + 2j])), sorted([P()], key=operator.attrgetter('value'))[0].value)
print(operator.methodcaller('add', 1, b=2)(P()), list(map(operator.methodcaller('upper'), ['a', 'b'])))
print(operator.attrgetter('mean')(statistics)([1, 3]), operator.methodcaller('most_common', 1)(collections.Counter('aab')))
f = string.Formatter()
print(f.get_field('0.inner.value', [P()], {})[0], f.get_field('a[1]', [], {'a': [5, 6]}), f.get_value('k', [], {'k': 3}))
print(f.format('{0.value} {x[0]} {0.inner.value:>4}', P(), x=[9]), f.vformat('{}-{}', [1, 2], {}))
try:
    operator.attrgetter('missing')(P())
except AttributeError as e:
    print(type(e).__name__)
try:
    operator.attrgetter(1)
except TypeError as e:
    print(type(e).__name__)
