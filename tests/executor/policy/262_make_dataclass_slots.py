# imports: copy, dataclasses
# make_dataclass(..., slots=True) rebuilds its class with type() from a copy of its dict, which
# says 'types': the new class is recorded as made by dataclasses' code (class_maker.c), as the
# class it replaces was (new_class.c), so dataclasses finishes it (__qualname__, and for a
# frozen one its own __getstate__/__setstate__, which copy then calls).
import copy, dataclasses
P = dataclasses.make_dataclass('P', ['x', ('y', int, dataclasses.field(default=2))], slots=True)
p = P(1)
p.y = 3
print(p, P.__slots__, P.__qualname__, dataclasses.fields(P)[1].name, copy.deepcopy(p))
F = dataclasses.make_dataclass('F', ['x'], slots=True, frozen=True)
f = F([1])
g = copy.deepcopy(f)
print(f, g, g == f, g.x is f.x, copy.copy(f), hash(F((1,))) == hash(F((1,))))
class Q(P):
    pass
print(Q(5), dataclasses.replace(f, x=0))
