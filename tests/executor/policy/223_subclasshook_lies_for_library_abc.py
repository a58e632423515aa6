# imports: collections.*
# expect: refused Forbidden definition of dunder __subclasshook__ in class Liar
# collections.abc.Mapping asks each of its subclasses' __subclasshook__: a snippet subclass
# answering True makes every object a Mapping for every library's isinstance() checks.
import collections.abc
class Liar(collections.abc.Mapping):
    def __getitem__(self, k):
        raise KeyError(k)
    def __iter__(self):
        return iter(())
    def __len__(self):
        return 0
    @classmethod
    def __subclasshook__(cls, other):
        return True
print(isinstance(5, collections.abc.Mapping))
