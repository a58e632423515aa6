total = 0
for i in range(5):
    total = total + i
print(total)
total
