# imports: operator
# expect: refused Forbidden access to dunder attribute: __reduce_ex__
import operator
operator.methodcaller('__reduce_ex__', 2)(1)
