n = 0
while n < 5:
    n += 1
    if n == 10:
        break
else:
    print('while completed', n)
m = 0
while True:
    m += 1
    if m > 3:
        break
else:
    print('never')
print(m)
n + m
