d = {i: i * i for i in range(6)}
for k in list(d):
    if k % 2:
        del d[k]
d
