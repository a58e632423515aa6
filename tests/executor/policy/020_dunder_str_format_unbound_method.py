# expect: refused Forbidden access to dunder attribute: __dict__
str.format('{0.__dict__}', 1)
