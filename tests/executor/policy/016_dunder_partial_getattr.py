# imports: functools
# expect: refused Forbidden access to dunder attribute: __dict__
import functools
g = functools.partial(getattr, 1)
g('__dict__')
