# imports: typing
# expect: native
import typing
class C:
    x: int
    y: typing.List[str]
def f(a: int) -> str:
    return str(a)
(typing.get_type_hints(C), typing.Optional[int], f(3))
