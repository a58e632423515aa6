# expect: refused Forbidden definition of dunder __getattribute__ in class U
# type.__new__(mcls, name, bases, ns) likewise, as a metaclass's __new__ calls it.
def ga(self, name):
    return 'answered ' + name
U = type.__new__(type, 'U', (), {'__getattribute__': ga})
print(U().anything)
