# expect: refused Forbidden access to introspection attribute: gi_code
def g():
    yield 1
g().gi_code
