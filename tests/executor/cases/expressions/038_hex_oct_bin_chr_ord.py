print(hex(255), oct(8), bin(5), chr(65), ord('a'), hex(-1), bin(0))
print(chr(0x1F600), ord('é'))
int(hex(1234), 16)
