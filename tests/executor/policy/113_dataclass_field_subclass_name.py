# imports: dataclasses
# expect: refused Forbidden definition of dunder __dataclass_fields__ in class Base
# Now refused earlier: a snippet class may not define dataclasses' state (class_dunders.c); the
# callback refusal and the audit hook's check below stay as the backstops.
# A base class's __dataclass_fields__ may hold a Field subclass whose name is a property: its
# getter is snippet code, refused when dataclasses calls it (the audit hook's check at the exec,
# which takes only exact Fields, would refuse it next).
import dataclasses
class F(dataclasses.Field):
    __slots__ = ()
    @property
    def name(self):
        return "b=__import__('os').getpid()"
    @name.setter
    def name(self, v):
        pass
f = F(dataclasses.MISSING, dataclasses.MISSING, True, True, None, True, {}, False)
@dataclasses.dataclass
class Plain:
    z: int
f._field_type = dataclasses.fields(Plain)[0]._field_type
f.type = int
class Params:
    frozen = False
class Base:
    __dataclass_fields__ = {'b': f}
    __dataclass_params__ = Params
@dataclasses.dataclass
class D(Base):
    a: int = 1
