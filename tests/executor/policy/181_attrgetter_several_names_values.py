# expect: refused Forbidden access to module: sys
# imports: operator
# attrgetter with several names returns a tuple whose items no check saw: the module sys,
# read from statistics' namespace. Every value the getter reads is checked.
import operator, statistics
operator.attrgetter('sys', 'math')(statistics)
