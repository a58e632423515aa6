# expect: refused Forbidden access to dunder attribute: __dict__
x = 1
x.__dict__
