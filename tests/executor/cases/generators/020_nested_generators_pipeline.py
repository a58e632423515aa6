def read(lines):
    for l in lines:
        yield l
def strip(it):
    for l in it:
        yield l.strip()
def nonempty(it):
    for l in it:
        if l:
            yield l
list(nonempty(strip(read([' a ', '  ', 'b', '']))))
