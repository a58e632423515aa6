# expect: refused Forbidden access to dunder attribute: __globals__
# collections.UserString.format is Python code calling the real str.format on a string the
# snippet gave: str's own format checks its fields while a snippet runs, whoever calls it.
import collections, random
collections.UserString("{0.__globals__[_os].environ}").format(random.seed)
