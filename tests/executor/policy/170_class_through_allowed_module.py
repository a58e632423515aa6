# expect: refused Forbidden access to class fractions.Fraction: module fractions is not allowed
# statistics re-exports fractions.Fraction: a class is judged by its own module, not by the
# module it was read from.
import statistics
statistics.Fraction(1, 3)
