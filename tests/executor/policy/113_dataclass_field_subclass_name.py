# imports: dataclasses
# expect: refused snippet code called back while dataclasses builds a class
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
