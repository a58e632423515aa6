tests = ['abc', 'ABC', 'Abc', '123', '12.5', '   ', '', 'a1', 'Title Case']
for t in tests:
    print(repr(t), t.isalpha(), t.isupper(), t.islower(), t.isdigit(), t.isspace(), t.isalnum(), t.istitle(), t.isnumeric())
'x'.isidentifier()
