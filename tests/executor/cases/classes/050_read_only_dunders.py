# imports: enum, operator, collections
# The dunders agent code reads every day: __class__ (its __name__, calling it, in f-strings,
# through getattr, attrgetter, str.format fields and match patterns), __bases__ and __mro__,
# enum's __members__, and super().__init_subclass__(**kw) in a class hook.
import collections, enum, operator
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __repr__(self):
        return f'{self.__class__.__name__}({self.x}, {self.y})'
    def moved(self, dx):
        return self.__class__(self.x + dx, self.y)
class Point3(Point):
    pass
p = Point3(1, 2)
print(p, p.moved(3), p.__class__ is Point3, type(p) is p.__class__)
print(getattr(p, '__class__').__name__, hasattr(p, '__class__'), (1).__class__, 'a'.__class__.__name__)
print(operator.attrgetter('__class__.__name__')(p), '{0.__class__.__name__}'.format(p))
print('{p.__class__.__mro__[1].__name__}'.format_map({'p': p}))
match p:
    case object(__class__=c):
        print('matched', c.__name__)
print([c.__name__ for c in Point3.__mro__], Point3.__bases__, Point3.__mro__ == tuple(Point3.mro()))
print(bool.__bases__, bool.__mro__, collections.OrderedDict.__bases__)
class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3
print(list(Color.__members__), Color.__members__['GREEN'], len(Color.__members__))
print({name: m.value for name, m in Color.__members__.items()})
class Flags(enum.Flag):
    A = 1
    B = 2
    AB = 3
print(list(Flags.__members__.items()))
class Registry:
    plugins = {}
    def __init_subclass__(cls, /, name=None, **kw):
        super().__init_subclass__(**kw)
        Registry.plugins[name or cls.__name__] = cls
class Tagged(Registry):
    def __init_subclass__(cls, tag='', **kw):
        super().__init_subclass__(**kw)
        cls.tag = tag
class A(Registry, name='alpha'):
    pass
class B(Tagged, tag='b', name='beta'):
    pass
print(sorted(Registry.plugins), B.tag, Registry.plugins['beta'] is B)
try:
    class Bad(Registry, unknown=1):
        pass
except TypeError as e:
    print('TypeError', e)
print(A.__init_subclass__.__name__, int.__init_subclass__.__name__)
(p.__class__, Color.__members__['RED'], B.__mro__)
