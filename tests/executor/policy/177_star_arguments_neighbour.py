# expect: native
# *args, **kwargs and class bases and keywords holding the snippet's own and allowed values
# work as before (173-176 refuse only what they hold that the policy refuses).
import collections
L = []
L.extend(map(abs, [-3, 1, -2]))
kw = {}
kw.update(zip(['key', 'reverse'], [abs, True]))
print(max(*L), sorted([3, -5, 1], **kw), list(map(*[abs], [-1, -2])), dict(**{'a': 1}, b=2))
class Base:
    def hello(self):
        return 'hello'
class Meta(type):
    pass
bases = []
bases.extend([Base, collections.OrderedDict])
class X(*bases, metaclass=Meta, **{}):
    pass
print(X().hello(), type(X).__name__, len(X.mro()), max(*[[1, 5, 2]]))
