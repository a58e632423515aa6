# expect: refused Forbidden access to fractions.Fraction.limit_denominator: module fractions is not allowed
# Called at once (obj.name(...), the walk's fast path for method calls), the method gets the
# check it gets when read as a value (158).
import statistics
statistics.Fraction(1, 3).limit_denominator(10)
