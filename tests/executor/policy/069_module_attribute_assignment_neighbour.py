# expect: native
import math
pi = math.pi
pi = 3
(pi, math.pi)
