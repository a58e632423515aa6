# expect: refused Forbidden access to class numbers.Rational
# imports: fractions
# type.__new__(type, name, bases, ns) is the same class creation as type(name, bases, ns).
import fractions
ns = {}
ns.update(zip(['__eq__'], fractions.Fraction.mro()[1:2]))
T = type.__new__(type, 'T', (), ns)
