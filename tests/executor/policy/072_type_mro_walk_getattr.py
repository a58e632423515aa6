# expect: refused Forbidden access to dunder attribute: __bases__
getattr(type(1), '__bases__')
