# expect: refused Forbidden access to module namespace helper: enum.global_enum
# imports: enum
# global_enum writes an enum's members into sys.modules[cls.__module__].__dict__ (here the
# process's __main__). from enum import ... names no attribute: refused as a value.
from enum import global_enum, Enum
@global_enum
class C(Enum):
    A = 1
