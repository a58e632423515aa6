out = []
for i in range(3):
    out.append(i)
for i in range(10, 0, -3):
    out.append(i)
for i in range(0):
    out.append('never')
print(out, i)
list(range(-2, 2))
