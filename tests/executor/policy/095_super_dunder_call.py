# expect: refused Forbidden access to dunder attribute: __init_subclass__
# Defining dunder hooks is allowed; reaching one through super() is a dunder read like any other.
class Base:
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
class A(Base):
    pass
