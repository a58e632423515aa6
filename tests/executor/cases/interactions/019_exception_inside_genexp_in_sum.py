# expect: native
sum(1 / (x - 2) for x in range(5))
