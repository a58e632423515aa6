# expect: refused Forbidden access to dunder attribute: __func__
import random
getattr(random.randint, '__func__')
