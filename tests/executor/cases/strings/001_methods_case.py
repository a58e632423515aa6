s = 'Hello, World'
print(s.lower(), s.upper(), s.title(), s.swapcase(), s.capitalize(), 'ß'.casefold())
print(s.startswith('Hell'), s.endswith(('x', 'ld')), s.isalpha(), 'abc'.isalpha(), '123'.isdigit())
s.center(20, '*')
