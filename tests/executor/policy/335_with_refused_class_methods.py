# imports: pprint
# expect: refused Forbidden access to _io._IOBase.__enter__: module _io is not allowed
# s.__exit__ read by the walk is refused (a C method of _io), but `with` looked __enter__ and
# __exit__ up on the type and ran them unchecked: pprint's stream (the worker's sys.stdout)
# was closed for all later library code; queue's threading.Condition ran its acquire (336).
import pprint
s = pprint.PrettyPrinter()._stream
with s:
    pass
print(s.closed)
