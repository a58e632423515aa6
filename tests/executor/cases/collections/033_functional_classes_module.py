# imports: typing
# namedtuple, typing.NamedTuple, typing.TypedDict and typing.NewType name their class's
# module after their caller's frame: a script's are __main__'s.
import collections
import typing
P = collections.namedtuple('P', 'x y')
P2 = collections.namedtuple('P2', 'a', module='__main__')
N = typing.NamedTuple('N', [('a', int), ('b', str)])
T = typing.TypedDict('T', {'k': int})
UserId = typing.NewType('UserId', int)
print(P.__module__, P2.__module__, N.__module__, T.__module__, UserId.__module__)
print(P(1, 2), N(1, 'b'), T(k=3), UserId(5), repr(UserId))
P.norm = lambda self: self.x + self.y
print(P(3, 4).norm(), N._fields, P._fields)
