def sign(v):
    match v:
        case 0:
            return 'zero'
        case n if n < 0:
            return 'neg %d' % n
        case n:
            return 'pos %d' % n
[sign(v) for v in (0, -3, 7)]
