# imports: functools
# expect: refused cannot copy from a module
# `updated` updates getattr(wrapper, '__dict__') (here a property returning the snippet's dict)
# from the wrapped object's __dict__: a module's is its globals.
import functools, random
store = {}
class W:
    __dict__ = property(lambda self: store)
functools.update_wrapper(W(), random, assigned=(), updated=('__dict__',))
store['__builtins__']['getattr'](object, '__subclasses__')()
