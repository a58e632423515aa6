class Base:
    def __init__(self, **kw):
        self.extra = sorted(kw)
class Named(Base):
    def __init__(self, name, **kw):
        self.name = name
        super().__init__(**kw)
class Aged(Base):
    def __init__(self, age, **kw):
        self.age = age
        super().__init__(**kw)
class Person(Named, Aged):
    pass
p = Person(name='ann', age=30, city='x')
(p.name, p.age, p.extra, [k.__name__ for k in Person.__mro__] if False else 'mro-hidden')
