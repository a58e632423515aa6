class Point:
    __match_args__ = ('x', 'y')
    def __init__(self, x, y):
        self.x, self.y = x, y
def where(p):
    match p:
        case Point(0, 0):
            return 'origin'
        case Point(0, y):
            return 'y-axis %d' % y
        case Point(x=x, y=0):
            return 'x-axis %d' % x
        case Point(x, y) if x == y:
            return 'diagonal'
        case Point():
            return 'elsewhere'
[where(Point(*c)) for c in ((0, 0), (0, 5), (3, 0), (2, 2), (1, 2))]
