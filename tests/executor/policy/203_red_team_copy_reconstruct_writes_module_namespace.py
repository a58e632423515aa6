# imports: dataclasses, copy
# expect: refused copy cannot rebuild an object as a module (dataclasses)
# Now refused earlier: library code may not set attributes of another module or library class
# (guard_store.c); the audit hook's check below stays as the backstop.
# (A snippet class may no longer define __reduce_ex__ (class_dunders.c): copy.dispatch_table
# chooses the same reducer for the class.)
# copy.copy(x) calls x.__reduce_ex__ (snippet code) and rebuilds y = func(*args), then
# y.__dict__.update(state) in copy's own code: with func returning an allowed module, the
# snippet writes into that module's namespace (refused for `m.a = v`, 068). Here dataclasses'
# global _field_assign becomes a C callable ("...".format ignores its arguments) that returns
# code: no snippet code runs while dataclasses builds the class, the fields are exact Fields
# with identifier names, and __init__'s text holds the snippet's code, run by CPython.
import copy, dataclasses
def dataclasses_module():
    return dataclasses
class R:
    pass
copy.dispatch_table[R] = lambda r: (dataclasses_module, (), {'_field_assign': "self.x=__import__('os').getpid()".format})
copy.copy(R())
@dataclasses.dataclass(repr=False, eq=False, match_args=False)
class C:
    "doc"
    x: int
print('escaped, pid', C(0).x)
