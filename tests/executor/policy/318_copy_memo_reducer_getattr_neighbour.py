# imports: copy
# The neighbour of 317: deep copies of methods (a C method's reducer names getattr) are
# rebuilt as in CPython, bound to the copies of their objects, with a memo of the snippet's too.
import copy
d = {'a': 1}
L = copy.deepcopy([d.get, str.upper, d, [].append])
L[2]['b'] = 2
print(L[0]('a'), L[0]('b'), d.get('b'), L[1]('x'), L[2], L[3].__name__)
memo = {}
M = copy.deepcopy({'k': d.items}, memo)
print(sorted(M['k']()), len(memo) > 0)
class Memo(dict):
    pass
print(copy.deepcopy([d.keys, 5], Memo())[0]())
