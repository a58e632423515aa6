import math
r = math.sqrt(2)
# ---
(math.floor(r * 100), r > 1)
