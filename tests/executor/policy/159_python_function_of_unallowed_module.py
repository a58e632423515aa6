# expect: refused Forbidden access to class fractions.Fraction: module fractions is not allowed
# statistics hands out fractions.Fraction: the class is refused before any of its functions
# (a class is judged by its module, 167-172).
import statistics
statistics.Fraction.limit_denominator
