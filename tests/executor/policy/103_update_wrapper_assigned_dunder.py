# imports: functools
# expect: refused Forbidden access to dunder attribute: __globals__
# update_wrapper copies each `assigned` name with CPython's getattr and hands the value to the
# wrapper's __setattr__: here a stdlib function's globals (and the real builtins) would leak.
import functools, random
box = []
class W:
    def __setattr__(self, name, value):
        box.append(value)
functools.update_wrapper(W(), random.choice, assigned=('__globals__',), updated=())
box[0]['__builtins__']['getattr']
