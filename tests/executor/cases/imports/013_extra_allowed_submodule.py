# imports: collections.abc
import collections.abc
print(isinstance([], collections.abc.Sequence), isinstance({}, collections.abc.Mapping), isinstance(1, collections.abc.Iterable))
from collections.abc import Iterable
isinstance('s', Iterable)
