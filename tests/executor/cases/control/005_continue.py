odds = []
for i in range(10):
    if i % 2 == 0:
        continue
    odds.append(i)
j = 0
evens = []
while j < 10:
    j += 1
    if j % 2:
        continue
    evens.append(j)
print(odds, evens)
len(odds) + len(evens)
