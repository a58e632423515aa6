fs = []
for i in range(3):
    fs.append(lambda: i)
print([f() for f in fs])
gs = [lambda i=i: i for i in range(3)]
[g() for g in gs]
