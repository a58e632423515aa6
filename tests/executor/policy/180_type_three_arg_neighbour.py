# expect: native
# type() with three arguments and type.__new__ make classes from the snippet's own values.
def eq(self, other):
    return True
ns = {}
ns.update(zip(['__eq__', '__hash__', 'x'], [eq, None, 1]))
T = type('T', (object,), ns)
U = type.__new__(type, 'U', (T,), {'y': 2})
class M(type):
    def __new__(mcls, name, bases, d):
        return super().__new__(mcls, name, bases, d)
V = M('V', (U,), {'z': 3})
print(T() == 5, U().x, U().y, V().z, type(V).__name__, V.mro()[1].__name__)
