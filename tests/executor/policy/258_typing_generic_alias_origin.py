# imports: typing
# expect: refused Forbidden while a snippet runs: typing's code setting attribute 'closed' of class typing.IO
# The same forwarding from a plain generic alias: typing.IO[str] stores into typing.IO.
import typing
typing.IO[str].closed = True
