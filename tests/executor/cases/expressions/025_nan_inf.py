import math
nan = float('nan')
inf = float('inf')
print(nan == nan, nan != nan, inf > 1e308, -inf < 0, inf - inf != inf - inf)
print(math.isnan(nan), math.isinf(-inf), inf * 0)
[nan, inf, -inf]
