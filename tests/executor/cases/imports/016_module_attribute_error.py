# expect: native
import math
math.no_such_attribute
