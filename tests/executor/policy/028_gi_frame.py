# expect: refused Forbidden access to introspection attribute: gi_frame
def g():
    yield 1
gen = g()
gen.gi_frame
