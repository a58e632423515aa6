# expect: refused Forbidden access to class numbers.Rational
# imports: fractions
# The items of *iterable reach the callee without passing through the walk: map(*L, ...) would
# call whatever a list holds. Fraction.mro() answers a list holding numbers' classes (a module
# the profile does not allow), which the walk never takes out of it.
import fractions
L = fractions.Fraction.mro()[1:2]
made = list(map(*L, [1]))
