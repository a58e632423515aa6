# yield from sends a non-None value with the delegate's send method (PEP 380; CPython's
# PyIter_Send): an iterator without one raises AttributeError at the yield from, which ends the
# generator. None still advances it with next(); a delegate with send() gets the value.
import itertools
def g():
    yield from itertools.count()
it = g()
print(next(it))
try:
    it.send(5)
except AttributeError as e:
    print('AttributeError:', e)
print(next(it, 'finished'), it.gi_suspended)
def caught():
    try:
        yield from iter([1, 2, 3])
    except AttributeError as e:
        yield 'caught: ' + str(e)
c = caught()
print(next(c), c.send('x'), list(c))
def h():
    r = yield from iter([1, 2, 3])
    return r
x = h()
print(next(x), x.send(None), next(x))
class Echo:
    def __iter__(self):
        return self
    def __next__(self):
        return 'next'
    def send(self, v):
        return f'sent {v}'
def e():
    yield from Echo()
y = e()
print(next(y), y.send(7), y.send(None))
