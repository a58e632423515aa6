# expect: refused iterations
n = 0
while True:
    n += 1
