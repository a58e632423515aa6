# expect: refused Forbidden access to dunder attribute: __dict__
getattr(1, '__dict__')
