import collections
def f(m):
    match m:
        case {'a': 1}:
            return 'a1'
        case {}:
            return 'any mapping'
(f({'a': 1, 'b': 2}), f(collections.OrderedDict(x=1)), f({'a': 2}), f([]) if False else 'skip')
