# imports: functools, operator
# sorted/min/max keys, cmp_to_key, closures with nonlocal, default-bound loop variables,
# lru_cache, wraps, partial, reduce.
import functools, operator
data = [{'n': 'b', 'v': 2}, {'n': 'a', 'v': 2}, {'n': 'c', 'v': 1}]
print(sorted(data, key=lambda d: (-d['v'], d['n'])))
print(sorted(data, key=operator.itemgetter('v', 'n'), reverse=True))
print(sorted(['B', 'a', 'C'], key=str.lower), max(data, key=lambda d: d['v']), min('xay'))
def cmp(a, b):
    return (a > b) - (a < b)
print(sorted([3, 1, 2], key=functools.cmp_to_key(cmp)))
def counter():
    count = 0
    def inc(by=1):
        nonlocal count
        count += by
        return count
    return inc
c = counter(); c(); c(5)
print(c(), c.__name__, c.__qualname__)
adders = [lambda x, i=i: x + i for i in range(3)]
late = [lambda x: x + i for i in range(3)]
print([a(10) for a in adders], [l(10) for l in late])
@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(60), fib.cache_info().hits > 0)
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return ('wrapped', fn(*a, **k))
    return wrapper
@deco
def hello(name):
    """doc"""
    return 'hi ' + name
print(hello('x'), hello.__name__, hello.__doc__, hello.__wrapped__('y'))
p = functools.partial(sorted, key=len)
print(p(['ccc', 'a', 'bb']), functools.reduce(operator.mul, range(1, 6)))
print(list(itertools_free := map(lambda t: t[0] * t[1], zip([1, 2], [3, 4]))))
