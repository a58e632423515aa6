# imports: pprint
# expect: refused 'pyfence.StdStream' object has no attribute 'buffer'
# pprint's printer held the worker's stdout; its raw FileIO, initialised again, would reopen
# on any path (only the audit hook's refusal of write flags stood in the way). Refused by
# exec_check_slot_wrapper ("calling _io.FileIO.__init__ again"); since stdio.c the snippet's
# stdout is the executor's own, with no buffer to reach.
import pprint
raw = pprint.PrettyPrinter()._stream.buffer.raw
raw.__init__('/etc/hostname')
print(list(raw))
