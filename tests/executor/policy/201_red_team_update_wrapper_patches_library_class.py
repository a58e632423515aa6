# imports: dataclasses, functools
# expect: refused functools.update_wrapper/wraps cannot write into a library's class
# functools.update_wrapper(wrapper, wrapped, assigned=('name',)) does setattr(wrapper, 'name', ...)
# in functools' own code: the wrapper may be a library class (dataclasses.Field), so the
# "only the snippet's own classes may be changed" rule is bypassed. With Field.name a property
# whose getter is C code only (partial(next, iterator)) no snippet code runs while dataclasses
# builds the class, and the audit hook's re-read of the names (reads 9, 10) sees "x" while read 5
# (_field_init's `value = f.name`) put code into __init__'s text: real CPython code runs.
import dataclasses, functools
names = iter(['x', 'x', 'x', 'x', "__import__('os').getpid()"] + ['x'] * 50)
class W:
    pass
w = W()
w.name = property(functools.partial(next, names), {}.get)
functools.update_wrapper(dataclasses.Field, w, assigned=('name',), updated=())
@dataclasses.dataclass(repr=False, eq=False, match_args=False)
class C:
    "doc"
    x: int
print('escaped, pid', C(0).x)
