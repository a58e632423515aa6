# Harmless fields still format, through every route.
import collections
print("{0} {x} {y[1]} {z.real}".format(1, x=2, y=[3, 4], z=5), "{a}".format_map({"a": 6}))
print(collections.UserString("{0}-{1}").format("p", "q"), str.format("{0}", 7))
class S(str):
    pass
print(super(S, S("{0}!")).format(8))
