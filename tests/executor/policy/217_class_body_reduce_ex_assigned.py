# imports: copy
# expect: refused Forbidden definition of dunder __reduce_ex__ in class R
# Bound by assignment rather than def: copy.copy calls __reduce_ex__ and then calls what it
# answers and writes the state it answers, in copy's own code.
import copy
def reduce(self, proto):
    return (dict, (), None, None, iter([('k', 'v')]))
class R:
    __reduce_ex__ = reduce
print(copy.copy(R()))
