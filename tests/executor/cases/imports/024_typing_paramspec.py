# imports: typing
# typing objects with an __origin__ that are no alias (ParamSpec's args and kwargs) stay
# values the snippet holds; only an alias's origin must be a class or a special form (policy
# case 350).
import typing
P = typing.ParamSpec('P')
T = typing.TypeVar('T')
def call(f: typing.Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return f(*args, **kwargs)
print(P.args, P.kwargs, call(max, 3, 9))
print(typing.Optional[int], typing.Literal[1, 2], typing.Annotated[int, 'meta'])
