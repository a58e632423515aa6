# imports: dataclasses, enum, functools, typing
# The dunders of the class allow-list still work as natively: protocol methods, descriptors,
# class hooks, __slots__, and what library code adds to the snippet's classes (dataclasses'
# __eq__ and __dataclass_fields__, enum's and namedtuple's machinery, total_ordering).
import collections, dataclasses, enum, functools, typing
class Vec:
    __slots__ = ('x', 'y')
    __match_args__ = ('x', 'y')
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __repr__(self):
        return f'Vec({self.x}, {self.y})'
    def __format__(self, spec):
        return format(self.x, spec) + ',' + format(self.y, spec)
    def __eq__(self, o):
        return isinstance(o, Vec) and (self.x, self.y) == (o.x, o.y)
    __hash__ = None
    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y)
    __radd__ = __add__
    def __mul__(self, k):
        return Vec(self.x * k, self.y * k)
    def __rmul__(self, k):
        return self * k
    def __neg__(self):
        return Vec(-self.x, -self.y)
    def __abs__(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
    def __bool__(self):
        return bool(self.x or self.y)
    def __iter__(self):
        yield self.x
        yield self.y
    def __len__(self):
        return 2
    def __getitem__(self, i):
        return (self.x, self.y)[i]
    def __contains__(self, v):
        return v in (self.x, self.y)
    def __round__(self, n=0):
        return Vec(round(self.x, n), round(self.y, n))
class Idx:
    def __index__(self):
        return 1
class Box(dict):
    def __missing__(self, k):
        return k * 2
class Ctx:
    def __enter__(self):
        return 'in'
    def __exit__(self, *exc):
        return True
class Named:
    def __set_name__(self, owner, name):
        self.name = name
    def __get__(self, obj, owner=None):
        return 'got ' + self.name
class Base:
    seen = []
    def __init_subclass__(cls, **kw):
        Base.seen.append(cls.__name__)
    def __class_getitem__(cls, item):
        return (cls.__name__, item)
    def __getattr__(self, name):
        return 'missing ' + name
    def __call__(self, v):
        return v + 1
class Child(Base):
    "Child's doc"
    attr = Named()
    n: int = 3
class Meta(type):
    def __call__(cls, *a):
        return 'made ' + cls.__name__
class Made(metaclass=Meta):
    pass
@dataclasses.dataclass(frozen=True, order=True)
class D:
    a: int
    b: list = dataclasses.field(default_factory=list, compare=False)
    def __post_init__(self):
        self.b.append(self.a)
@dataclasses.dataclass(frozen=True, slots=True)
class DS:
    a: int
@functools.total_ordering
class O:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
    def __lt__(self, o):
        return self.v < o.v
class Color(enum.Enum):
    RED = 1
    GREEN = 2
    def __str__(self):
        return self.name.lower()
class P(typing.NamedTuple):
    a: int
    b: str = 'b'
T = type('T', (Vec,), {'__doc__': 'made by type', '__lt__': lambda s, o: s.x < o.x})
v = Vec(1, 2) + Vec(3, 4)
with Ctx() as c:
    raise ValueError('swallowed')
match v:
    case Vec(x, y):
        matched = (x, y)
print(v, -v, 2 * v, abs(Vec(3, 4)), bool(Vec(0, 0)), list(v), len(v), v[Idx()], 6 in v)
print(f'{v:>3}', round(Vec(1.26, 2.5), 1), Box()[4], c, matched, [10, 20][Idx()])
print(Child().attr, Base.seen, Child[int], Child().nope, Child()(1), Child.__doc__, Made())
print(D(1), D(1) == D(1, [5]), D(1) < D(2), O(1) <= O(2), str(Color.GREEN), Color(1), P(1))
print(DS(1), DS(1) == DS(1), T(1, 2) < T(2, 0), T.__doc__, Child.__annotations__, collections.namedtuple('N', 'a b')(1, 2))
