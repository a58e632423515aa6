# expect: refused Reached the max number of operations
total = 0
for i in range(10 ** 9):
    total += i
