# expect: native
data = [1, 0, 2]
[10 / v for v in data if 10 / v > 1]
