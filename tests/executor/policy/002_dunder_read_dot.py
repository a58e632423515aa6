# expect: refused Forbidden access to dunder attribute: __class__
x = 1
x.__class__
