# imports: enum, datetime
# expect: refused Forbidden while a snippet runs: enum's code setting dunder '__reduce_ex__' of class When
# As 281, through the same line of enum's code, with another enum function as the value:
# enum's functional API files a dunder-named "member" of a function of enum's own as a plain
# attribute (class_dunders.c allows a library's own functions there), so Base.__reduce_ex__
# is enum.global_str, and EnumType.__new__ then copies first_enum's __reduce_ex__ (Base's)
# over the data type's on When. A name-only allow-list ((enum, __reduce_ex__)) let copy
# and pickle call global_str as When's reducer; guard_store.c allows only Enum's own.
import datetime
import enum

Base = enum.Enum('Base', [('__reduce_ex__', enum.global_str)])
class When(datetime.time, Base):
    NOON = (12, 0)
print(When.NOON)
