# expect: refused object has no attribute 'gi_code'
def g():
    yield 1
g().gi_code
