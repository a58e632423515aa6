# imports: dataclasses, copy, functools
# expect: refused Forbidden: copy writing state or items into a type object it did not make
# Now refused earlier still: copy writes state only into an object the reducer's function has
# just made (case 306), and dataclasses.Field exists already. Before that, library code could
# not set attributes of another module or library class (guard_store.c: "copy's code setting
# attribute 'name' of class dataclasses.Field"); both stay, with the audit hook's check below,
# as backstops.
# copy._reconstruct's slot state: setattr(y, key, value) in copy's own code, y = func(*args)
# any object the snippet holds (the reducer chosen through copy.dispatch_table: a snippet class
# may no longer define __reduce_ex__), here the library class dataclasses.Field (198's rule bypassed).
# Then the same C-only property getter as in 201: real code in __init__.
import copy, dataclasses, functools
names = iter(['x', 'x', 'x', 'x', "__import__('os').getpid()"] + ['x'] * 50)
def field_class():
    return dataclasses.Field
class R:
    pass
copy.dispatch_table[R] = lambda r: (field_class, (), (None, {'name': property(functools.partial(next, names), {}.get)}))
copy.copy(R())
@dataclasses.dataclass(repr=False, eq=False, match_args=False)
class C:
    "doc"
    x: int
print('escaped, pid', C(0).x)
