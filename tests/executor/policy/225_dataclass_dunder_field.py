# imports: copy, dataclasses
# expect: refused a dataclass field named __reduce_ex__ in class D
# A field without a default binds no class attribute, only an annotation: dataclasses' __init__
# then stores it on every instance, where copy's getattr(x, '__reduce_ex__') finds it first,
# calls it, and calls and writes what it answers.
import copy, dataclasses
@dataclasses.dataclass
class D:
    __reduce_ex__: object
def reduce(proto):
    return (dict, (), None, None, iter([('k', 'v')]))
print(copy.copy(D(reduce)))
