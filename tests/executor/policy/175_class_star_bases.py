# expect: refused Forbidden access to class numbers.Rational
# imports: fractions
# class X(*it) hands its bases to CPython unchecked: a subclass of the refused class
# numbers.Rational would inherit its constructor and dunders.
import fractions
class R(*fractions.Fraction.mro()[1:2]):
    pass
