# expect: refused Forbidden access to dunder attribute: __subclasses__
import collections
collections.UserString("{x.__class__.__subclasses__}").format_map({"x": 1})
