n = 2 ** 100
print(n, n * n, n // 3, n % 97, -n)
print(10 ** 20 + 1)
n + 1
