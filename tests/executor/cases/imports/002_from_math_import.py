from math import sqrt, pi as PI, floor
print(sqrt(2), PI, floor(3.9))
round(PI * 2, 4)
