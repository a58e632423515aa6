# imports: dataclasses, functools
# expect: refused Forbidden while a snippet runs: functools's code setting attribute '__gt__' of class dataclasses.P
# Only its maker's own code changes the rebuilt class too (254).
import dataclasses, functools
P = dataclasses.make_dataclass('P', ['x'], namespace={'__lt__': lambda s, o: s.x < o.x},
                               slots=True)
functools.total_ordering(P)
