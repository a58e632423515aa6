# expect: native
# Was refused: super().__init_subclass__(**kw) in a snippet class's __init_subclass__ is the
# documented idiom. It reads object's hook, or a snippet base's, bound to the new class
# (dunder_read.c); a library's own hook read from its own class stays refused (247).
class Base:
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
class A(Base):
    pass
A.__name__
