print(repr(1.0), repr(0.1), repr(1e16), repr(1e-5), str(123456789.0), 1/3)
print(repr('a'), repr("it's"), repr('say "hi"'), repr('\n'))
str(2 ** 0.5)
