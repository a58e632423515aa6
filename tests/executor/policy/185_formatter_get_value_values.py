# expect: refused Forbidden access to class numbers.Rational
# imports: string, fractions
# Formatter.get_value called by C code (map) hands out an item of a list the walk never took
# it out of: the refused class numbers.Rational. What it returns is checked.
import string, fractions
L = fractions.Fraction.mro()[1:2]
list(map(string.Formatter().get_value, [0], [L], [{}]))
