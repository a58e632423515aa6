s = 'héllo'
b = b'hi'
print([c for c in s], [x for x in b], list(bytearray(b'ab')))
len(s)
