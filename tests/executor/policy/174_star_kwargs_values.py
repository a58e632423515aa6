# expect: refused Forbidden access to class numbers.Rational
# imports: fractions
# The values of **mapping reach the callee unchecked as well: sorted's key= would be the
# refused class numbers.Rational, which a dict filled by C code (dict.update) holds.
import fractions
kw = {}
kw.update(zip(['key'], fractions.Fraction.mro()[1:2]))
sorted([1], **kw)
