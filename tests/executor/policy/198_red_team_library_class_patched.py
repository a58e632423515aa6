# expect: refused Forbidden assignment to an attribute of class dataclasses.Field: name
# imports: dataclasses
# A library's class is read by the library's own code, which trusts it: with Field.name a
# property, dataclasses built __init__'s source text from one name and the audit hook's check
# read another. Only the snippet's own classes may have attributes set or deleted.
import dataclasses
store = {}
reads = [0]
def get_name(self):
    reads[0] += 1
    if reads[0] == 5:  # _field_init's `value = f.name`: lands in __init__'s body text
        return "__import__('os').getpid()"
    return store.get(self)  # every other read, the audit hook's check included, is "x"
def set_name(self, v):
    store[self] = v
dataclasses.Field.name = property(get_name, set_name)
@dataclasses.dataclass(repr=False, eq=False, match_args=False)
class C:
    "doc"
    x: int
C(0).x
