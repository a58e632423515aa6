# imports: functools, copy, dataclasses, enum
# Neighbours of cases 296-299 that keep working: cached_property with ordinary names, copy and
# deepcopy of snippet objects, dataclasses and slotted classes, update_wrapper on a snippet's
# object (its __wrapped__ and __name__ are names the snippet may set itself, answered from the
# instance dict), exception notes, enum members.
import functools, copy, dataclasses, enum
class C:
    def __init__(self, n):
        self.n = n
    @functools.cached_property
    def double(self):
        print('computing')
        return self.n * 2
c = C(4)
print(c.double, c.double, vars(c) if False else c.n)
print(copy.copy(c).double, copy.deepcopy(c).n)
@dataclasses.dataclass
class P:
    x: int
    y: list
p = P(1, [2])
q = copy.deepcopy(p)
q.y.append(3)
print(p, q, copy.copy(p) == p)
class S:
    __slots__ = ('a', '__dict__', '__weakref__')
    def __init__(self):
        self.a = 1
        self.b = 2
s = copy.deepcopy(S())
print(s.a, s.b)
class T:
    __slots__ = ('__b',)
    def __init__(self):
        self.__b = 5
    def get(self):
        return self.__b
print(copy.copy(T()).get())
class Deco:
    def __init__(self, f):
        functools.update_wrapper(self, f)
    def __call__(self, *a):
        return self.__wrapped__(*a)
def add(a, b):
    return a + b
d = Deco(add)
print(d(1, 2), d.__name__, d.__wrapped__ is add, copy.copy(d)(3, 4))
try:
    raise ValueError('v')
except ValueError as e:
    e.add_note('a note')
    print(e.__notes__, copy.copy(e).__notes__)
class Color(enum.Enum):
    RED = 1
print(Color.RED, copy.deepcopy(Color.RED) is Color.RED)
