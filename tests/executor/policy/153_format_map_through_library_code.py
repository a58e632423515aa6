# expect: refused Forbidden access to dunder attribute: __class__
import collections
collections.UserString("{x.__class__.__mro__}").format_map({"x": 1})
