# imports: functools
# expect: refused cannot copy from a class
# A class's __dict__ holds its descriptors: type.__dict__['__subclasses__'] is every class.
# (A snippet class may no longer make its __dict__ a property returning a dict of its own,
# which handed them to the snippet by key: class_dunders.c.)
import functools
class W:
    pass
w = W()
functools.update_wrapper(w, type)
w.mro
