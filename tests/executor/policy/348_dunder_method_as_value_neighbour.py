# imports: pprint
# expect: logs 4 ['__repr__', '__repr__'] True True
# 347's neighbour: methods whose names the snippet may read stay values it may hold, however
# reached (the dispatch table's first keys are dict's and OrderedDict's __repr__ slot wrappers; object's
# __init_subclass__; a library class's __init__), and the snippet's own functions may have any
# name (a decorator in a class body gets __getattr__).
import pprint
keys = list(pprint.PrettyPrinter._dispatch)[:2]
kept = []
def keep(f):
    kept.append(f)
    return f
class C:
    @keep
    def __getattr__(self, name):
        return 4
print(kept[0](C(), 'x'), [k.__name__ for k in keys], callable(object.__init_subclass__),
      callable(pprint.PrettyPrinter.__init__))
