# imports: copy, queue
# expect: refused Forbidden access to class threading.Condition
# What copy rebuilds is checked as a value the snippet may hold: a deep copy hands it back in
# containers the walk does not look into. Here the reducer's argument is harmless, but the
# snippet's memo answers its deep copy with a threading.Condition, and the reducer's function
# (the real type, called from copy's frame) made its class. typing's alias reducer
# (operator.getitem, (globals()[alias._name], args)) rebuilt an alias named '__builtins__' as
# the real __import__ that way; its argument, typing's builtins dict, is now refused first
# (330).
import copy, queue
cond = queue.Queue().not_empty
class Marker:
    pass
m = Marker()
class R:
    pass
copy.dispatch_table[R] = lambda r: (type, (m,))
class Memo(dict):
    def get(self, key, default=None):
        return cond if key == hash(m) << 4 else default
out = copy.deepcopy([R()], Memo())
print(out)
