# imports: copy, types
# expect: refused Forbidden keyword argument __deepcopy__
# types.SimpleNamespace stores its keyword arguments in the instance dict, where copy's
# getattr(x, '__deepcopy__', None) finds the snippet's function first and calls it. A keyword
# named as a dunder a snippet's class may not define is refused at the call (eval_call.c).
import copy, types
def dc(memo):
    print('deepcopy hook ran')
    return 42
ns = types.SimpleNamespace(**{'__deepcopy__': dc})
print(copy.deepcopy(ns))
