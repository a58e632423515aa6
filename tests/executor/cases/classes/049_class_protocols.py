# Class protocols: __init_subclass__ keywords, property setter/deleter, __getattr__, slots,
# __hash__ = None, cooperative super() in a diamond, __format__/__radd__, descriptors with
# __set_name__, __class_getitem__.
class Base:
    registry = []
    def __init_subclass__(cls, tag=None, **kw):
        Base.registry.append((cls.__name__, tag))
class A(Base, tag='a'):
    pass
class B(A):
    pass
print(Base.registry)
class Temp:
    def __init__(self):
        self._c = 0
    @property
    def c(self):
        return self._c
    @c.setter
    def c(self, v):
        if v < -273:
            raise ValueError('too cold')
        self._c = v
    @c.deleter
    def c(self):
        self._c = None
t = Temp(); t.c = 5
try:
    t.c = -300
except ValueError as e:
    print(e)
del t.c
print(t.c)
class Lazy:
    def __getattr__(self, name):
        return name * 2
    def __getitem__(self, k):
        return k
print(Lazy().abc, Lazy()[1:3], Lazy()[1, ...])
class P:
    __slots__ = ('x', 'y')
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __eq__(self, o):
        return isinstance(o, P) and (self.x, self.y) == (o.x, o.y)
    __hash__ = None
p = P(1, 2)
try:
    p.z = 3
except AttributeError as e:
    print('slots:', e)
try:
    hash(p)
except TypeError as e:
    print(e)
class D1:
    def who(self): return ['D1']
class D2(D1):
    def who(self): return ['D2'] + super().who()
class D3(D1):
    def who(self): return ['D3'] + super().who()
class D4(D2, D3):
    def who(self): return ['D4'] + super().who()
print(D4().who(), [c.__name__ for c in D4.mro()])
class V:
    def __init__(self, *a): self.a = a
    @classmethod
    def of(cls, s): return cls(*s.split(','))
    def __repr__(self): return f'V{self.a}'
    def __format__(self, spec): return f'<{spec}:{len(self.a)}>'
    def __len__(self): return len(self.a)
    def __bool__(self): return bool(self.a)
    def __add__(self, o): return V(*(self.a + o.a))
    def __radd__(self, o): return self if o == 0 else NotImplemented
print(V.of('1,2'), f'{V(1):xx}', format(V(), 'q'), bool(V()), sum([V(1), V(2)]), len(V(1, 2, 3)))
class Desc:
    def __set_name__(self, owner, name): self.name = '_' + name
    def __get__(self, obj, typ=None): return 'class' if obj is None else getattr(obj, self.name, 'unset')
    def __set__(self, obj, v): setattr(obj, self.name, v * 10)
class H:
    d = Desc()
h = H(); print(H.d, h.d); h.d = 4; print(h.d)
class G:
    def __class_getitem__(cls, item): return f'G[{item.__name__}]'
print(G[int])
