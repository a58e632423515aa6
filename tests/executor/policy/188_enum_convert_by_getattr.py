# expect: refused Forbidden access to module namespace helper: _convert_
# imports: enum
# The name is refused on every route that names an attribute, getattr() included.
import enum
getattr(enum.IntEnum, '_convert_')
