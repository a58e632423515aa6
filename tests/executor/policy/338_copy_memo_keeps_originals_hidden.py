# imports: copy, random, json
# expect: logs hidden: ['PyCapsule', 'PyCapsule']
# deepcopy keeps every original it copied alive at memo[id(memo)], and the memo is the
# snippet's: the list there handed out originals copy reached inside CPython code (a bound
# method's __self__, random's module-level Random instance, whose _randbelow then rigged
# random.choice for every caller; a library object's real __dict__ as its state). They are kept
# in a capsule now, alive as long as the memo, readable by nobody; the copies work as before.
import copy, random, json
def held(x):
    memo = {}
    y = copy.deepcopy(x, memo)
    return y, [type(v).__name__ for v in memo.values() if type(v).__name__ in ('list', 'PyCapsule')]
c, a = held(random.choice)
e, b = held(json.JSONEncoder(indent=2))
print('hidden:', a + b)
print(c('a') == 'a', e.indent, copy.deepcopy([[1], {'k': [2]}]))
