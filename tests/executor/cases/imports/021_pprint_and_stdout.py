# imports: pprint
# What library code writes to sys.stdout is printed output, as in a notebook: pprint's own
# printing, and a printer made for the default stream.
import pprint
pprint.pprint({'b': [1, 2, 3], 'a': 'x' * 30}, width=30)
pp = pprint.PrettyPrinter(indent=2)
pp.pprint(list(range(3)))
s = pp._stream
print(s.writable(), s.closed, s.encoding)
s.writelines(['two ', 'lines\n'])
n = s.write('written directly\n')
n
