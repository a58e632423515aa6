class Node:
    __match_args__ = ('op', 'left', 'right')
    def __init__(self, op, left, right):
        self.op, self.left, self.right = op, left, right
def ev(n):
    match n:
        case int(v):
            return v
        case Node('+', l, r):
            return ev(l) + ev(r)
        case Node('*', l, r):
            return ev(l) * ev(r)
ev(Node('+', 1, Node('*', 2, 3)))
