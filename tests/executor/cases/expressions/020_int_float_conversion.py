print(int('42'), int('-7'), int('ff', 16), int('0b101', 0), int(3.99), int(-3.99))
print(float('1.5'), float('inf'), float('-inf'), float(' 2 '), int(True))
float('nan') != float('nan')
