# imports: operator
# expect: refused cannot reach format or format_map
# attrgetter would hand over the unchecked str.format method descriptor.
import operator, random
f = operator.attrgetter('format')(str)
f('{0.__globals__}', random.choice)
