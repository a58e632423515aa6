registry = []
class Base:
    def __init_subclass__(cls, tag='none', **kw):
        registry.append((cls.__name__, tag))
class A(Base, tag='a'):
    pass
class B(A):
    pass
registry
