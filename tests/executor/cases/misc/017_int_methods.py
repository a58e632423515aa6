n = 255
(n.bit_length(), n.to_bytes(2, 'big'), int.from_bytes(b'\x01\x00', 'little'), (-7).__abs__() if False else abs(-7), (10).as_integer_ratio(), n.bit_count())
