# imports: typing, dataclasses
# expect: refused Forbidden access to typing's _GenericAlias.__init__: it would run again on an object typing made and shares
# typing's aliases are cached (typing.List[int] is one object for every caller) and its type
# variables module-level (typing.AnyStr). The walk refuses stores on them (case 328), but the
# alias class's __init__, run again on an existing alias, made the same stores from typing's
# own code: every later List[int] was ClassVar[int], and a dataclass field annotated with it
# was no field any more. A typing class's __init__ is not the snippet's to hold.
import typing, dataclasses
GA = type(typing.List[int])
GA.__init__(typing.List[int], typing.ClassVar, (int,), name='ClassVar')
print(typing.List[int])
