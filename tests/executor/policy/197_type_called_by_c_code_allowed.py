# expect: native
# type() called by C code still answers every class the snippet may hold, and library code
# asking type(self) about its own objects (a deque's repr, a Counter's) is not the snippet.
import collections, queue
q = queue.Queue()
class A:
    pass
print([t.__name__ for t in map(type, [1, 'a', A(), q, q.queue])])
print(sorted([3, 'b', 1.5], key=lambda v: type(v).__name__))
print(repr(collections.Counter('abca')), repr(q.queue), list(map(type, map(type, [1]))))
