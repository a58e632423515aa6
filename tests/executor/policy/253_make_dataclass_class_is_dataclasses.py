# imports: dataclasses
# expect: refused Forbidden assignment to an attribute of class dataclasses.P: extra
# make_dataclass's class counts as dataclasses' (new_class.c): dataclasses' own code decorates
# it (051), while the snippet changes only its own classes: subclass it to add methods.
import dataclasses
P = dataclasses.make_dataclass('P', ['x'])
print(P(1))
P.extra = 1
