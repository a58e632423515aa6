# imports: functools
# The same function once the profile allows its module (here as "functools", which _functools
# implements); and functions of allowed modules, bound methods included.
import statistics, random, collections
print(statistics.reduce(lambda a, b: a + b, [1, 2]), statistics.sqrt(4.0))
r = random.Random(1)
print(callable(r.seed), callable(collections.namedtuple))
P = collections.namedtuple("P", "x y")
print(P(1, 2)._replace(x=3), P._make([4, 5]))
