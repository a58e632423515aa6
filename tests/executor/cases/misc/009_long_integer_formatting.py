n = 3 ** 200
s = str(n)
(len(s), s[:10], f'{n:,}'[:14], n.bit_length(), n % 1000)
