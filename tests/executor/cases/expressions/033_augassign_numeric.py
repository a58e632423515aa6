x = 10
x += 5
x -= 3
x *= 2
x //= 5
x **= 3
x %= 7
x <<= 2
x |= 1
x ^= 8
x &= 0xff
x >>= 1
print(x)
y = 7.0
y /= 2
y
