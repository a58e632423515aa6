# expect: refused copy cannot rebuild an object as a module (collections)
# imports: copy
# Now refused earlier: library code may not set attributes of another module or library class
# (guard_store.c); the audit hook's check below stays as the backstop.
# namedtuple checks its names with collections' globals (str, _sys.intern), which library code
# can rebind for a snippet (copy rebuilding an object into a module's __dict__, as in 203; the
# reducer chosen through copy.dispatch_table, since a snippet class may not define __reduce_ex__): with
# str a subclass whose isidentifier() says yes, a name that is code reached eval. The audit hook
# allows namedtuple's compile only for the text its exact-str identifier names make.
import collections, copy
class S(str):
    def isidentifier(self):
        return True
class FakeSys:
    intern = S
def mod():
    return collections
class R:
    pass
copy.dispatch_table[R] = lambda r: (mod, (), {'str': S, '_sys': FakeSys()})
copy.copy(R())
P = collections.namedtuple('P', ['a', "b=().__class__"])
