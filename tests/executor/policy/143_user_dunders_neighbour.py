# expect: native
# The same dunders, terminating, work as natively.
class D:
    def __set_name__(self, owner, name):
        self.name = name
    def __get__(self, obj, objtype=None):
        return 'got ' + self.name
class Base:
    subclasses = []
    def __init_subclass__(cls, **kw):
        Base.subclasses.append(cls.__name__)
class C(Base):
    d = D()
    def __class_getitem__(cls, item):
        return (cls.__name__, item)
    def __getattr__(self, name):
        return 'missing ' + name
class M(type):
    def __call__(cls, *a):
        return 'made ' + cls.__name__
class E(metaclass=M):
    pass
(C().d, Base.subclasses, C[int], C().nope, E())
