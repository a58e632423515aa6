# imports: enum, datetime, copy, pickle
# An enum mixed with a data type that defines its own __reduce_ex__ (datetime.time,
# datetime.datetime): EnumType.__new__ finds the data type's __reduce_ex__ on the new class
# and stores enum.Enum's own over it, so that members copy and pickle as members. A snippet's
# class may not define __reduce_ex__ (copy and pickle call what it answers): allowed only as
# that one function of enum's, by identity (guard_store.c). 282 is the neighbour.
import copy
import datetime
import enum
import pickle

class When(datetime.time, enum.Enum):
    NOON = (12, 0)
    MIDNIGHT = (0, 0)
print(When.NOON, When.NOON.hour, When.MIDNIGHT.isoformat())
print(copy.copy(When.NOON) is When.NOON, copy.deepcopy(When.MIDNIGHT) is When.MIDNIGHT)

class Day(datetime.datetime, enum.Enum):
    EPOCH = (1970, 1, 1)
print(Day.EPOCH.year, copy.deepcopy(Day.EPOCH) is Day.EPOCH)
try:
    pickle.dumps(Day.EPOCH)
except Exception as e:
    # members of a class a snippet made cannot be found by name from another process
    print(type(e).__name__)
