# imports: functools, typing, dataclasses
# expect: refused Forbidden while a snippet runs: typing's code setting attribute 'closed' of class typing.IO
# The same forwarding from a plain generic alias: typing.IO[str] stores into typing.IO.
# The walk refuses a store on a typing alias itself (328), and functools.update_wrapper
# writes into none (351); library code storing on one (a snippet dataclass's __init__ run
# with the alias as self) still reaches the forwarding.
import functools, typing, dataclasses
class Src:
    closed = True
@dataclasses.dataclass
class Setter:
    closed: object
Setter.__init__(typing.IO[str], Src.closed)
