# expect: refused Forbidden access to dunder attribute: __globals__
import random
getattr(random.randint, '__globals__')
