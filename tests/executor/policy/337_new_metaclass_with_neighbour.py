# imports: collections, decimal, copy, enum
# The neighbour of 331-336: __new__ as a function (cached instances, a subclass's instance, a
# class method, a library's own __new__ as namedtuple makes it), metaclasses without __eq__ or
# __hash__, classes with __eq__ and __hash__ of their own, and `with` on the snippet's context
# managers and allowed libraries' work as in CPython.
import collections, decimal, copy, enum
class Single:
    _inst = None
    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst
class Shape:
    def __new__(cls, kind):
        return super().__new__(Circle if kind == 'c' else cls)
class Circle(Shape):
    pass
class Cm:
    @classmethod
    def __new__(cls, k):
        return object.__new__(k)
P = collections.namedtuple('P', 'x y')
class Q(P):
    pass
class U(collections.UserDict):
    def __new__(cls, *a, **kw):
        return super().__new__(cls)
class Meta(type):
    def describe(cls):
        return cls.__name__.lower()
class W(metaclass=Meta):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return 1
class Ctx:
    def __enter__(self):
        return 'in'
    def __exit__(self, *exc):
        return False
print(Single() is Single(), type(Shape('c')).__name__, type(Cm()).__name__, Q(1, 2))
print(copy.copy(U(a=1)), U(b=2).copy(), W() == 3, hash(W()), list({W(): 1}.values()), W.describe(), {W: 1}[W])
with Ctx() as v, decimal.localcontext() as ctx:
    ctx.prec = 5
    print(v, decimal.Decimal(1) / 7)
