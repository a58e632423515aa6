b = b'hello world'
print(b.upper(), b.split(), b[0], b[-1:], b.find(b'o'), b.replace(b'l', b'L'), b + b'!', b * 2)
ba = bytearray(b'abc')
ba[0] = 65
ba.append(100)
ba.extend(b'ef')
print(ba, bytes(ba), len(ba))
ba
