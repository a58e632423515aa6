# imports: typing, collections, operator
# expect: refused Forbidden: class FR derives from typing.ForwardRef
# typing.get_type_hints calls t._evaluate(globalns, localns, guard) on every ForwardRef of the
# hints, with globalns the namespace of a module the snippet chooses (a function's
# __wrapped__'s globals, or sys.modules[cls.__module__].__dict__). `_root=True` lets a class
# derive from typing's internal classes; a ForwardRef with `_evaluate = collections.ChainMap`
# got typing's namespace back in the hints, and C code took sys and the real eval out of it.
import typing, collections, operator
class FR(typing.ForwardRef, _root=True):
    _evaluate = collections.ChainMap
class W:
    pass
w = W()
w.__annotations__ = {'x': FR('x')}
w.__wrapped__ = typing.get_type_hints
h = typing.get_type_hints(w)
ns = list(map(operator.itemgetter(0), map(operator.attrgetter('maps'), h.values())))
print(list(map(operator.itemgetter('sys'), ns)))
