x = 1.5
y = 0.25
print(x + y, x - y, x * y, x / y, x // y, x % y, x ** 2)
print(0.1 + 0.2, 1e300 * 10, -1e300 * 10)
x * 4
