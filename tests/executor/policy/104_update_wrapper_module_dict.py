# imports: functools
# expect: refused cannot copy from a module
# `updated` updates getattr(wrapper, '__dict__') from the wrapped object's __dict__: a module's
# is its globals, whose private names (random._os) would then be plain attributes of the
# wrapper. (A snippet class may no longer make its __dict__ a property returning a dict of its
# own, which reached the real builtins: class_dunders.c.)
import functools, random
class W:
    pass
w = W()
functools.update_wrapper(w, random, assigned=(), updated=('__dict__',))
w._os.getpid()
