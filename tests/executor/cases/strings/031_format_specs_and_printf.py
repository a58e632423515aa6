# Format specs in f-strings (nested, =, conversions), printf-style, str.format, dates.
x = 3.14159
n = 1234567
print(f"{x:.2f} {x:10.3e} {n:,} {n:_x} {n:>12} {'s':*^9} {-5:+d} {0.5:%} {n!r:>10}")
print("%s %r %5.1f %-4d| %x %o %c %%" % ('a', 'b', 2.25, 7, 255, 8, 65))
print("{0}{1}{0}".format('a', 'b'), "{:>{w}}".format('r', w=5), "{k}".format_map({'k': 1}))
w = 7; p = 2
print(f"{x:{w}.{p}f}|{x=}|{n = :,}|{'nested ' + f'{p}'}")
import datetime
d = datetime.date(2024, 3, 5)
print(f"{d:%Y/%m/%d} {d!s} {d!r}", format(d, '%a'))
print(f"{True!s:>6}{None}{[1, 2]!a}", f"{{literal}}", f"{3:#b}{3:#o}{255:#X}")
print('%(a)s-%(b)05.1f' % {'a': 1, 'b': 2.5}, b'%s %d' % (b'x', 3))
f"{1+1}" + f"{'q'!r}"
