# imports: dataclasses
# expect: refused setting attribute '_field_assign' of module dataclasses
# Now refused earlier: library code may not set attributes of another module or library class
# (guard_store.c); the audit hook's check below stays as the backstop.
# A Python __init__ that does `self.a = a` is a setattr primitive run in CPython, not in the
# walk: its self may be any object, a module or a library class included. With a dataclass of
# the snippet's own, N.__init__(dataclasses, v) writes dataclasses' global _field_assign
# (refused for `dataclasses._field_assign = v`, 068). A C callable ("...".format ignores its
# arguments) there returns code for __init__'s text while the fields themselves stay exact
# Fields with identifier names and no snippet code runs: CPython runs the code. Needs only
# dataclasses. (string.Template.__init__(dataclasses.Field, v) and the like do the same.)
import dataclasses
@dataclasses.dataclass
class N:
    _field_assign: object
N.__init__(dataclasses, "self.x=__import__('os').getpid()".format)
@dataclasses.dataclass(repr=False, eq=False, match_args=False)
class C:
    "doc"
    x: int
print('escaped, pid', C(0).x)
