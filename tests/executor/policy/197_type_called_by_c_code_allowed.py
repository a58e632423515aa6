# expect: native
# type() called by C code still answers every class the snippet may hold, and library code
# asking type() about its own objects is not the snippet: statistics.mean asks type(total) of
# a fractions.Fraction (a module the profile does not allow) in its own frame.
import collections, queue, statistics
q = queue.Queue()
class A:
    pass
print([t.__name__ for t in map(type, [1, 'a', A(), q, q.queue])])
print(sorted([3, 'b', 1.5], key=lambda v: type(v).__name__))
print(statistics.mean([1, 2, 4]), statistics.median([3, 1, 2]), list(map(type, map(type, [1]))))
print(repr(collections.Counter('abca')), repr(q.queue))
