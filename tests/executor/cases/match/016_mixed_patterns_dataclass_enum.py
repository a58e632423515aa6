# imports: dataclasses, enum
# Mixed patterns: or, guards, sequences with rest, mappings with **, class patterns on a
# dataclass (keyword and positional), enum value patterns, nested patterns.
def describe(x):
    match x:
        case 0 | 1:
            return 'small'
        case int(n) if n < 0:
            return f'neg {n}'
        case [a, b, *rest]:
            return f'seq {a} {b} {rest}'
        case {'type': 'pt', 'x': x0, **kw}:
            return f'pt {x0} {kw}'
        case str() as s:
            return 'str ' + s
        case (1, 2) | (3, 4):
            return 'pair'
        case float(v) if v > 1:
            return 'big float'
        case _:
            return 'other'
print([describe(v) for v in [0, -3, [1, 2, 3, 4], {'type': 'pt', 'x': 1, 'y': 2}, 'hi', (3, 4), 2.5, None, 7]])
from dataclasses import dataclass
@dataclass
class Point:
    x: int
    y: int
def where(p):
    match p:
        case Point(x=0, y=0):
            return 'origin'
        case Point(x=0, y=yy):
            return f'y-axis {yy}'
        case Point(xx, 0):
            return f'x-axis {xx}'
        case Point():
            return 'elsewhere'
print([where(Point(*a)) for a in [(0, 0), (0, 5), (3, 0), (1, 1)]])
import enum
class Color(enum.Enum):
    RED = 1
    GREEN = 2
match Color.GREEN:
    case Color.RED:
        print('red')
    case Color.GREEN:
        print('green')
match {'a': [1, {'b': 2}]}:
    case {'a': [1, {'b': bv}]}:
        print('deep', bv)
