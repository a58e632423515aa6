# imports: typing, dataclasses
# Annotated's origin is whatever it annotates (a ForwardRef, a TypeVar, list[int], a Union):
# such aliases are values the snippet holds and uses (policy case 350 refuses a module only).
import typing, dataclasses
T = typing.TypeVar('T')
@dataclasses.dataclass
class Row:
    a: typing.Annotated[list[int], 'm']
    b: typing.Annotated[typing.Optional[int], 'm'] = None
    c: typing.Annotated[int | None, 'm'] = None
    d: typing.Annotated['Row', 'm'] = None
print(typing.Annotated[T, 'm'], Row([1]).a, [f.name for f in dataclasses.fields(Row)])
print(typing.get_args(Row.__annotations__['b']), typing.get_origin(Row.__annotations__['a']))
