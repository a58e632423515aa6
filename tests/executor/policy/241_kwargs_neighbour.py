# imports: dataclasses, functools, types
# The neighbour of 238-240: keyword arguments with ordinary names, and dunders a snippet's
# class may define, pass as natively: dict(**d), forwarding **kwargs, partial's keywords,
# dataclasses.replace, SimpleNamespace, a class statement's metaclass= and __init_subclass__
# keywords, and a snippet function taking **kwargs.
import dataclasses, functools, types
def show(*args, **kwargs):
    return sorted(kwargs.items())
def forward(**kwargs):
    return show(1, **kwargs)
@dataclasses.dataclass
class P:
    x: int
    y: int = 0
class Base:
    def __init_subclass__(cls, tag='', **kw):
        cls.tag = tag
class Child(Base, tag='t'):
    pass
d = {'a': 1, 'b': 2}
print(dict(**d, c=3), forward(**d), forward(__init__=1, __repr__=2))
print(functools.partial(show, **d)(e=5), dataclasses.replace(P(1), **{'y': 7}))
print(types.SimpleNamespace(**d), Child.tag, show(__doc__='doc', __module__='m'))
