# expect: refused Forbidden access to class numbers.Rational
# imports: fractions
# class X(**d): the keyword values (metaclass=) are handed to CPython, which calls the
# metaclass: here the refused class numbers.Rational, from a dict filled by C code.
import fractions
kw = {}
kw.update(zip(['metaclass'], fractions.Fraction.mro()[1:2]))
class X(**kw):
    pass
