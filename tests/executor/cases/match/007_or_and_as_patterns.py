def f(v):
    match v:
        case (1 | 2 | 3) as small:
            return 'small %d' % small
        case [('a' | 'b') as letter, _]:
            return 'letter ' + letter
        case {'k': [1, *_] as lst}:
            return 'lst %r' % (lst,)
    return 'none'
[f(v) for v in (2, ['b', 0], {'k': [1, 2]}, 9)]
