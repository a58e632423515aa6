# expect: refused Forbidden access to module: os
import random
getattr(random, '_os')
