# expect: refused Forbidden assignment to an attribute of module math
import math
math.pi = 3
