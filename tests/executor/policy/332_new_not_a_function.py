# imports: collections, json, functools, operator
# expect: refused Forbidden: K.__new__ must be a function
# 331's check sees what a snippet function answers as __new__; a callable object or a C
# function answering it (here functools.partial(operator.getitem, {K: json})) would answer
# json to UserDict.__copy__ unseen. So __new__ is a function, stored later too.
import collections, json, functools, operator
class K(collections.UserDict):
    pass
K.__new__ = functools.partial(operator.getitem, {K: json})
print(K(a=1).copy())
