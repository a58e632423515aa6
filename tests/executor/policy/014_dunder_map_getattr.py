# expect: refused Forbidden access to dunder attribute: __class__
list(map(getattr, [1], ['__class__']))
