# imports: dataclasses, functools
# expect: refused Forbidden while a snippet runs: functools's code setting attribute '__gt__' of class dataclasses.P
# Only its maker's own code changes a class types.new_class made for a library: functools'
# total_ordering, writing its methods into make_dataclass's class, is another library's.
import dataclasses, functools
P = dataclasses.make_dataclass('P', ['x'], namespace={'__lt__': lambda s, o: s.x < o.x})
functools.total_ordering(P)
