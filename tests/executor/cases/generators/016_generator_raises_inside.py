# expect: native
def g():
    yield 1
    raise KeyError('inside')
list(g())
