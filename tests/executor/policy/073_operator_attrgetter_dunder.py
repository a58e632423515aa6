# imports: operator
# expect: refused Forbidden access to dunder attribute: __class__
import operator
operator.attrgetter('__class__')(1)
