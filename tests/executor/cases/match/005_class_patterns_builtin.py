def kind(v):
    match v:
        case bool(b):
            return 'bool'
        case int(i):
            return 'int %d' % i
        case float():
            return 'float'
        case str() as s:
            return 'str ' + s
        case [int(), *_]:
            return 'list of int'
        case _:
            return 'other'
[kind(v) for v in (True, 3, 2.5, 'x', [1, 'a'], None)]
