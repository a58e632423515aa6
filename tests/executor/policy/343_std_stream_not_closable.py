# imports: pprint
# expect: logs ['after', 'no buffer', 'no close']
# Library code hands out sys.stdout (pprint.PrettyPrinter()._stream). CPython's is an _io
# object over the worker's fd 1: the snippet could not call its close, but `yield from` calls a
# delegate's close by name when its generator is closed, and an instance-dict readline made
# the stream's .buffer iterable, so dropping the generator closed the worker's stdout. The
# snippet's std streams are the executor's own (stdio.c): no buffer, no close, and what is
# written to them goes to the logs.
import pprint
s = pprint.PrettyPrinter()._stream
seen = []
try:
    b = s.buffer
except AttributeError:
    seen.append('no buffer')
try:
    s.close()
except AttributeError:
    seen.append('no close')
pprint.pprint(['after'] + seen)
