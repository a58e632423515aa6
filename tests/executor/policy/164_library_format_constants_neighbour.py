# Library code formats with its own constant strings, dunder fields included: the dict views'
# repr ('{0.__class__.__name__}({0._mapping!r})') works while a snippet runs; the snippet's own
# format strings are still checked (152-155).
import collections
u = collections.UserDict({"a": 1})
print(u.keys(), u.items(), u.values())
print(collections.ChainMap({"b": 2}).keys())
[u.get("a"), u.setdefault("c", 3), sorted(u.keys())]
