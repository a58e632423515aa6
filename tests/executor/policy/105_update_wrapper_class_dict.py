# imports: functools
# expect: refused cannot copy from a class
# A class's __dict__ holds its descriptors: type.__dict__['__subclasses__'] is every class.
import functools
store = {}
class W:
    __dict__ = property(lambda self: store)
functools.update_wrapper(W(), type)
store['__subclasses__'](object)
