# imports: functools
# expect: refused Forbidden assignment or deletion of dunder attribute: __class__
# functools.update_wrapper sets the names of `assigned` on the wrapper: a name read but not
# set is refused there too.
import functools
class W:
    pass
def f():
    pass
functools.update_wrapper(W(), f, assigned=('__name__', '__class__'))
