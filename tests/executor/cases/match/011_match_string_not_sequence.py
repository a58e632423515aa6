def f(v):
    match v:
        case [a, b, c]:
            return 'sequence'
        case str():
            return 'string'
(f('abc'), f(('a', 'b', 'c')), f(b'abc'))
