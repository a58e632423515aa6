print(None, True, False, ..., 0x1f, 0o17, 0b101, 1_000_000, 1e3, 2.5e-3)
print('single', "double", '''triple''', b'bytes', r'raw\n')
print('ellipsis')
0xff
