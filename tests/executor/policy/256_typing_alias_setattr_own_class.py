# imports: functools, typing
# expect: refused Forbidden while a snippet runs: typing's code setting attribute 'x' of class typing.SupportsInt
# typing's aliases forward a store of a name that is no dunder to their origin, from typing's
# own code: typing's code is the right package for typing's classes, but the snippet chose the
# class, the name and the value. A class a library made at import is changed by no library
# code while a snippet runs (guard_store.c).
# The walk refuses a store on a typing alias itself (328); library code storing on one
# (functools.update_wrapper's assigned names) still reaches the forwarding.
import functools, typing
class Src:
    x = 1
functools.update_wrapper(typing.Annotated[typing.SupportsInt, 0], Src, assigned=('x',), updated=())
print(typing.SupportsInt.x)
