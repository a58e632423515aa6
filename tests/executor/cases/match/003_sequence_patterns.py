def shape(seq):
    match seq:
        case []:
            return 'empty'
        case [x]:
            return 'one %r' % (x,)
        case [x, y]:
            return 'two %r %r' % (x, y)
        case [first, *rest]:
            return 'many %r+%d' % (first, len(rest))
[shape(s) for s in ([], [1], (1, 2), [1, 2, 3, 4], 'ab')]
