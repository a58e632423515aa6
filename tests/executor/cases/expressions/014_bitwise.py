a = 0b1100
b = 0b1010
print(a & b, a | b, a ^ b, a << 2, a >> 1, ~a, -a >> 1)
print(1 << 70, (1 << 70) >> 69)
a & ~b
