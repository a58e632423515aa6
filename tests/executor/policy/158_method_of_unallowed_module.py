# expect: refused Forbidden access to fractions.Fraction.limit_denominator: module fractions is not allowed
# A bound method is judged by its function: statistics hands out fractions.Fraction, whose
# module this profile does not allow.
import statistics
statistics.Fraction(1, 3).limit_denominator
