# expect: refused Forbidden access to dunder attribute: __subclasses__
object.__subclasses__()
