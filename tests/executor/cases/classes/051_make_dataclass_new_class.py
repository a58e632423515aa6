# imports: dataclasses, types
# Classes made by types.new_class say module 'types' (3.11's make_dataclass names none): they
# count as the caller's. make_dataclass's are dataclasses' (which decorates them), the
# snippet's own new_class classes the snippet's (it sets their attributes, dataclass() too).
import dataclasses, types
P = dataclasses.make_dataclass('P', ['x', ('y', int, 5)], namespace={'norm': lambda self: self.x + self.y})
p = P(1)
print(p, p.norm(), [f.name for f in dataclasses.fields(P)], P.__module__, P)
Q = dataclasses.make_dataclass('Q', [('a', int, 0)], bases=(P,), order=True)
print(Q(1, 2, 3) < Q(1, 2, 4), dataclasses.asdict(Q(1, 2, 3)), dataclasses.astuple(Q(0, 1, 2)))
class Sub(P):
    def twice(self):
        return 2 * self.norm()
print(Sub(2, 3).twice(), Sub.__mro__[1] is P)
K = types.new_class('K', (), {}, lambda ns: ns.update({'a': 1, '__annotations__': {'a': int}}))
K.b = 2
KD = dataclasses.dataclass(K)
print(K.a, K.b, K, K.__module__, KD(7), KD is K)
S = dataclasses.make_dataclass('S', ['x'], slots=True, namespace={'__module__': '__main__'})
print(S(1), S.__slots__, S)
(P(3, 4), Q.__name__)
