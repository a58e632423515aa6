print(1 + 2.0, 3 * True, True + True, 7 / 2, 2 ** -1, 10 // 4.0)
print(1 == 1.0, hash(1) == hash(1.0), 0.5 + 1j)
(1 + 2j) * (3 - 1j)
