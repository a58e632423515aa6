# expect: refused Forbidden access to dunder attribute: __class__
getattr(1, '__class__')
