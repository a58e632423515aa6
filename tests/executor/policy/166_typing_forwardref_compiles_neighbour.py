# imports: typing
# expect: native
# A forward reference only compiles its string (pandas' to_datetime makes Union[..., "Series"]
# on every call); evaluating one stays refused (109, 110).
import typing
(typing.ForwardRef("Series"), typing.Union[int, "Series"], typing.List["x + 1"])
