# expect: refused Forbidden keyword argument __reduce_ex__
# A class statement's keywords go to the metaclass and to __init_subclass__ (a base class's,
# possibly a library's), which may store them: they are checked as a call's are.
def reduce(proto):
    return (dict, ())
class Base:
    def __init_subclass__(cls, **kw):
        print('init_subclass got', sorted(kw))
class K(Base, __reduce_ex__=reduce):
    pass
