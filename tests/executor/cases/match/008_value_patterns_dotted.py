import math
class Color:
    RED = 'red'
    GREEN = 'green'
def name(c):
    match c:
        case Color.RED:
            return 'is red'
        case Color.GREEN:
            return 'is green'
        case math.pi:
            return 'is pi'
    return 'unknown'
[name(c) for c in ('red', 'green', math.pi, 'blue')]
