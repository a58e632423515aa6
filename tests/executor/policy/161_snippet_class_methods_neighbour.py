# imports: dataclasses
# Methods dataclasses builds for the snippet's own classes have __main__'s namespace as their
# globals: they stay values the snippet may hold.
import dataclasses
@dataclasses.dataclass
class P:
    x: int
class Q(P):
    def __init__(self, x, y):
        super().__init__(x)
        self.y = y
q = Q(1, 2)
print(q, callable(P.__init__), P.__repr__(q), P.__eq__(q, Q(1, 3)))
