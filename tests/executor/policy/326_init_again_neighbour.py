# imports: collections
# The neighbour of 321-325: a subclass's __init__ calling its C base's through super() (or
# the base's unbound __init__ where that base only fills the object's contents: the
# containers, the exceptions) works as in CPython.
import collections
class Prop(property):
    def __init__(self, f):
        super().__init__(f)
class Err(ValueError):
    def __init__(self, msg):
        ValueError.__init__(self, msg)
        self.extra = 1
class D(dict):
    def __init__(self, **kw):
        dict.__init__(self, **kw)
class Q(collections.deque):
    def __init__(self, it):
        collections.deque.__init__(self, it, 3)
class O(collections.OrderedDict):
    def __init__(self):
        super().__init__(a=1)
class K:
    p = Prop(lambda self: 'p')
print(K().p, Err('x').args, D(a=1), Q([1, 2, 3, 4]), O())
x = []
x.__init__([1, 2])
e = KeyError('a')
e.__init__('b')
print(x, e.args)
