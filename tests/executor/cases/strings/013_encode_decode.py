s = 'naïve €'
b = s.encode('utf-8')
print(b, len(s), len(b), b.decode('utf-8') == s, s.encode('ascii', 'replace'), s.encode('latin-1', 'ignore'))
print(bytes([72, 105]).decode(), b'abc'.hex(), bytes.fromhex('4142'))
b[:3]
