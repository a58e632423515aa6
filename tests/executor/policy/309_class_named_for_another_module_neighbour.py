# The neighbour of case 308: named for a module the profile allows, or for none (the snippet's
# __main__), namedtuple's classes work as in CPython.
import collections
P = collections.namedtuple('P', 'x y', module='math')
Q = collections.namedtuple('Q', 'x y')
print(P(1, 2), P.__module__, Q(3, 4)._asdict(), Q.__module__)
