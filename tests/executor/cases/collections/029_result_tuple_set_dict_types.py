({1: 'a', 'b': 2}, (1, 2), {3}, frozenset(), b'x', bytearray(b'y'), None)
