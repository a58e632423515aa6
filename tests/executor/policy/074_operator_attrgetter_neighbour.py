# imports: operator
# expect: native
import operator
(operator.attrgetter('real')(5), operator.methodcaller('upper')('a'))
