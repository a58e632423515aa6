# imports: typing, copy
# The neighbour of 327-328: typing's aliases and forms are read, compared, copied and deep
# copied as in CPython.
import typing, copy
A = typing.Dict[str, typing.List[int]]
print(copy.deepcopy(A), copy.copy(typing.Optional[int]), copy.deepcopy([typing.Literal['a'], typing.Union[int, str]]))
print(typing.get_origin(A), typing.get_args(A), A == typing.Dict[str, typing.List[int]])
print(typing.Union._name, typing.List._name, typing.Optional[int]._name)
