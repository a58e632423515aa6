# expect: refused Maximum number of 1000000 iterations in While loop exceeded
class Base:
    def __init_subclass__(cls, **kw):
        while True:
            pass
class Child(Base):
    pass
