# expect: native
import random
random.seed(1)
(random.randint(1, 6), random.choice('abc'))
