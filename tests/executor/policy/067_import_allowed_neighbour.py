# expect: native
import math, re, itertools
from collections import Counter
(math.floor(2.5), bool(re.match('a', 'a')), Counter('x')['x'])
