# imports: typing
# typing's decorators that mark a class for static checkers store a dunder a snippet's class
# may not define: no_type_check sets __no_type_check__ = True (get_type_hints then answers {}
# for what it marks, not {'x': int}), dataclass_transform sets __dataclass_transform__ to a
# dict of its arguments, which nothing reads at run time. Allowed for typing's code
# (guard_store.c).
import typing

@typing.no_type_check
class Loose:
    x: 'int'
    def m(self, a: 'int') -> 'str':
        return a
print(Loose().m(3), typing.get_type_hints(Loose))

@typing.dataclass_transform(kw_only_default=True)
class ModelBase:
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
class Model(ModelBase):
    a: int
print(Model.__name__, Model.__mro__)
