csv = 'a,b,,c'
print(csv.split(','), csv.split(',', 1), '  lots   of  space '.split(), 'a\nb\r\nc'.splitlines())
print('-'.join(['x', 'y', 'z']), ''.join(reversed('abc')), 'k=v=w'.rsplit('=', 1), 'abc'.partition('b'))
' | '.join(str(i) for i in range(4))
