# imports: operator
# expect: native
import operator
(operator.methodcaller('upper')('abc'), operator.methodcaller('split', ',')('a,b'), '{0}-{1}'.format(1, 2))
