# expect: refused Forbidden access to class numbers.Rational
# imports: fractions
# type(name, bases, ns) makes a class whose dunders CPython calls: a namespace filled by C code
# (dict.update) would make the refused class numbers.Rational its __eq__, never seen by a
# check. The bases and ns's values are checked.
import fractions
ns = {}
ns.update(zip(['__eq__'], fractions.Fraction.mro()[1:2]))
T = type('T', (), ns)
T() == 1
