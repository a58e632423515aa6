# expect: refused Forbidden access to dunder attribute: __dict__
list(map(getattr, [1], ['__dict__']))
