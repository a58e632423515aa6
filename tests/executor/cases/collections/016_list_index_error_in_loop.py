# expect: native
a = [1, 2, 3]
total = 0
for i in range(5):
    total += a[i]
