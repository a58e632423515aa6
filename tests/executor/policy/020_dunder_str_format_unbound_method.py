# expect: refused Forbidden access to dunder attribute: __class__
str.format('{0.__class__}', 1)
