print(round(2.5), round(3.5), round(2.675, 2), round(-0.5), round(1234, -2))
print(abs(-3), abs(-2.5), abs(3 + 4j), divmod(17, 5), divmod(-17, 5), divmod(7.5, 2))
round(3.14159, 3)
