# imports: collections, functools, copy, json, dataclasses, typing
# Neighbours of cases 301-303 that keep working: namedtuple with defaults (collections sets
# __defaults__ on the __new__ it made), functools' partialmethod and singledispatchmethod
# (__isabstractmethod__ on the function they made), wraps and lru_cache, copy of objects
# whose state holds names the snippet may set itself, typing.final on a snippet function.
import collections, functools, copy, json, dataclasses, typing
P = collections.namedtuple('P', 'x y', defaults=(0,))
print(P(1), copy.deepcopy(P(2, 3)))
class A:
    def g(self, x, y):
        return x + y
    h = functools.partialmethod(g, 10)
    @functools.singledispatchmethod
    def f(self, x):
        return 'obj'
    @f.register(int)
    def _(self, x):
        return 'int'
print(A().h(1), A().f(1), A().f('s'), A.h is not None, A.f is not None)
@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(20))
def deco(fn):
    @functools.wraps(fn)
    def inner(*a):
        return fn(*a) * 2
    return inner
@deco
def three():
    return 3
print(three(), three.__name__, three.__wrapped__() == 3)
@typing.final
def fin():
    return 1
print(fin())
class W:
    pass
w = W()
w.__wrapped__ = three
w.__name__ = 'w'
c = copy.copy(w)
print(c.__name__, c.__wrapped__ is three, copy.deepcopy(W()).__class__.__name__)
@dataclasses.dataclass(frozen=True)
class F:
    a: int
print(copy.deepcopy(F(1)), copy.copy(F(2)), json.dumps({'b': 1, 'a': 2}))
