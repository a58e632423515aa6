# imports: dataclasses
# The snippet's own classes (and its subclasses of a library's) may be changed, attributes set
# and deleted; dataclasses still builds the snippet's classes, calling nothing of the snippet's.
import collections
import dataclasses
class A:
    x = 1
A.x = 2
A.y = 3
del A.x
setattr(A, "z", 4)
delattr(A, "z")
B = type("B", (A,), {})
B.w = 5
P = collections.namedtuple("P", "a b")
class Q(P):
    pass
Q.norm = lambda self: self.a + self.b
@dataclasses.dataclass
class D:
    a: int = 0
    b: list = dataclasses.field(default_factory=list)
    def total(self):
        return sorted([self.a, 3], key=lambda v: -v)
D.c = 7
print(A.y, hasattr(A, "x"), B.w, Q(1, 2).norm(), D(5).total(), D.c, dataclasses.fields(D)[1].name)
