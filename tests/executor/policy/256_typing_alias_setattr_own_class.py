# imports: functools, typing, dataclasses
# expect: refused Forbidden while a snippet runs: typing's code setting attribute 'x' of class typing.SupportsInt
# typing's aliases forward a store of a name that is no dunder to their origin, from typing's
# own code: typing's code is the right package for typing's classes, but the snippet chose the
# class, the name and the value. A class a library made at import is changed by no library
# code while a snippet runs (guard_store.c).
# The walk refuses a store on a typing alias itself (328), and functools.update_wrapper
# writes into none (351); library code storing on one (a snippet dataclass's __init__ run
# with the alias as self) still reaches the forwarding.
import functools, typing, dataclasses
class Src:
    x = 1
@dataclasses.dataclass
class Setter:
    x: object
Setter.__init__(typing.Annotated[typing.SupportsInt, 0], Src.x)
print(typing.SupportsInt.x)
