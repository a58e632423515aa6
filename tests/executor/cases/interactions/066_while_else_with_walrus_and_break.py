items = [3, 5, 0, 7]
i = 0
while (n := items[i]) != 0:
    i += 1
    if n > 4:
        print('big', n)
else:
    print('hit zero at', i)
(i, n)
