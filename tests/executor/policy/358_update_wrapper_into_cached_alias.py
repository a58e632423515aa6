# imports: typing, functools, dataclasses
# expect: refused functools.update_wrapper/wraps cannot write into a typing object
# An alias passes stores of plain names on to its origin, but keeps its dunders, and
# update_wrapper's default updated=('__dict__',) updates the alias's own dict: with the cached
# typing.List[int] as the wrapper it took ClassVar[int]'s __origin__ and __args__, so every
# later List[int] was ClassVar[int] and a dataclass field annotated with it no field.
# update_wrapper writes into no typing object, as the walk's own stores do not (328).
import typing, functools, dataclasses
functools.update_wrapper(typing.List[int], typing.ClassVar[int])
print(typing.List[int])
