import math
print(math.sqrt(16), math.pi, math.floor(-2.5), math.ceil(2.1), math.gcd(12, 18), math.factorial(10))
print(math.log(math.e), math.log10(1000), math.log2(8), math.hypot(3, 4), math.isclose(0.1 + 0.2, 0.3))
print(math.comb(5, 2), math.perm(5, 2), math.prod([1, 2, 3, 4]), math.inf, math.trunc(-3.7), math.fsum([0.1] * 10))
math.degrees(math.pi)
