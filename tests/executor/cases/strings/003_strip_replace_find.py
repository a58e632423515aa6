s = '  xxhixx  '
print(repr(s.strip()), s.strip().strip('x'), s.lstrip(), s.rstrip() + '|')
t = 'banana'
print(t.replace('a', 'o'), t.replace('a', 'o', 1), t.find('na'), t.rfind('na'), t.find('z'), t.count('a'), t.index('n'))
t.removeprefix('ba').removesuffix('na')
