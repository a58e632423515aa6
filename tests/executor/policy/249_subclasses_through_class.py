# expect: refused Forbidden access to dunder attribute: __subclasses__
# The classic walk to every class of the interpreter: __class__ and __bases__ read, but
# __subclasses__ stays refused.
().__class__.__bases__[0].__subclasses__()
