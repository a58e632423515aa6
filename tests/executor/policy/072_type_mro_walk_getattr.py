# expect: refused Forbidden access to dunder attribute: __subclasses__
getattr(type(1), '__subclasses__')
