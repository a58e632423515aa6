# imports: pprint
# expect: refused Forbidden: calling _io.FileIO.__init__ again on a _io.FileIO object
# pprint's printer holds the worker's stdout; its raw FileIO, initialised again, would reopen
# on any path (only the audit hook's refusal of write flags stood in the way).
import pprint
raw = pprint.PrettyPrinter()._stream.buffer.raw
raw.__init__('/etc/hostname')
print(list(raw))
