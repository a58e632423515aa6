# expect: refused Forbidden access to module: os
import random
random._os
