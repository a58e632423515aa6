# imports: dataclasses, collections, collections.*, pandas, pandas.*
# expect: refused Forbidden definition of dunder __subclasshook__ in class X
# A namespace library code hands to type.__new__ may hold a refused dunder only as the library's
# own function. Any library module's function was accepted, but make_dataclass (through
# types.new_class) hands on the namespace the snippet chose: pandas' is_hashable as a Mapping
# subclass's __subclasshook__ answered True for every object, making each one a Mapping.
# Now the function must be of the package whose code calls type.__new__ (here types').
import dataclasses, collections.abc, pandas
P = dataclasses.make_dataclass('P', [('x', int)])
print(P(1).x)
X = dataclasses.make_dataclass('X', [], bases=(collections.abc.Mapping,),
                               namespace={'__subclasshook__': pandas.api.types.is_hashable})
print('isinstance(5, Mapping):', isinstance(5, collections.abc.Mapping))
