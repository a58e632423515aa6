# expect: refused Forbidden access to private attribute _sum of module statistics
# imports: operator
# methodcaller reads its method with the . operator's checks: a module's private names are
# its implementation, refused as statistics._sum is.
import operator, statistics
operator.methodcaller('_sum', [1, 2])(statistics)
