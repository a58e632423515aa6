print(sorted([3, 1], reverse=True), int('10', base=2), max([1, 5, 2], key=lambda v: -v), round(2.567, ndigits=1))
print(dict(a=1, b=2), list(range(1, 10, 3)), 'enum')
'-'.join(map(str, range(3)))
