# imports: functools, typing
# expect: refused Forbidden while a snippet runs: typing's code setting attribute 'closed' of class typing.IO
# The same forwarding from a plain generic alias: typing.IO[str] stores into typing.IO.
# The walk refuses a store on a typing alias itself (328); library code storing on one
# (functools.update_wrapper's assigned names) still reaches the forwarding.
import functools, typing
class Src:
    closed = True
functools.update_wrapper(typing.IO[str], Src, assigned=('closed',), updated=())
