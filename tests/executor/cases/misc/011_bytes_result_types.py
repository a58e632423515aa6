(b'\x00\xff', bytearray(b'ab'), bytes(b'xyz'), bytes(3))
