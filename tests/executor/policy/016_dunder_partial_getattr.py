# imports: functools
# expect: refused Forbidden access to dunder attribute: __class__
import functools
g = functools.partial(getattr, 1)
g('__class__')
