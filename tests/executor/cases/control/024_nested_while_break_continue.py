i = 0
out = []
while i < 4:
    i += 1
    j = 0
    while True:
        j += 1
        if j > i:
            break
        if j == 2:
            continue
        out.append((i, j))
out
