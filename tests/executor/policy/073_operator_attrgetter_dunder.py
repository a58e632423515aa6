# imports: operator
# expect: refused Forbidden access to dunder attribute: __dict__
import operator
operator.attrgetter('__dict__')(1)
