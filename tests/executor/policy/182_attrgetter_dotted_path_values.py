# expect: refused Forbidden access to module: sys
# imports: operator
# A dotted attrgetter path walks through a refused module (statistics.sys) to a value that
# passes (sys.flags); called by map, its result lands in a list. Every step is checked.
import operator, statistics
list(map(operator.attrgetter('sys.flags'), [statistics]))
