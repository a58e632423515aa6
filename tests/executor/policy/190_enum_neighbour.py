# imports: enum
# expect: native
# enum's classes, its functional API and its decorators work; `from enum import *` binds all
# but the namespace helpers (187-189). (The functional API needs module=: the class otherwise
# takes its module from a Python frame, which the walk runs none of.)
import enum
from enum import *
class Color(enum.Enum):
    RED = 1
    GREEN = 2
@enum.unique
class Perm(IntFlag):
    R = 4
    W = 2
Shape = enum.Enum('Shape', 'SQUARE CIRCLE', module='__main__')
print(Color.RED, Color(2).name, list(Color), Perm.R | Perm.W, Shape.CIRCLE.value, StrEnum, auto)
print(Color['GREEN'], [m.name for m in Shape], isinstance(Color.RED, Enum))
