# expect: refused Forbidden access to fractions.Fraction.limit_denominator: module fractions is not allowed
import statistics
statistics.Fraction.limit_denominator
