data = [1, 5, 12, 7, 20]
if (n := len(data)) > 3:
    print('long', n)
big = [y for x in data if (y := x * 2) > 10]
print(big, y)
while (k := data.pop()) > 5:
    print('popped', k)
k
