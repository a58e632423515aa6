# imports: copy, functools, types
# expect: refused Forbidden keyword argument __deepcopy__
# functools.partial keeps keywords that C code passes later (here map calling the partial):
# they are refused where the walk passes them, at partial(...).
import copy, functools, types
def dc(memo):
    print('deepcopy hook ran')
    return 42
make = functools.partial(types.SimpleNamespace, **{'__deepcopy__': dc})
print(list(map(copy.deepcopy, map(lambda f: f(), [make]))))
