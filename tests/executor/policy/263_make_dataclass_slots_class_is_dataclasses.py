# imports: dataclasses
# expect: refused Forbidden assignment to an attribute of class dataclasses.P: extra
# The class slots=True rebuilds counts as dataclasses', exactly like the one it replaces (253):
# the snippet changes only its own classes.
import dataclasses
P = dataclasses.make_dataclass('P', ['x'], slots=True)
print(P(1))
P.extra = 1
