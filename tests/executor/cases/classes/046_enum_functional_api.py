# imports: enum
# Enum's functional API names the new class's module after its caller's (sys._getframe(2)):
# a script's classes are __main__'s, picklable by name, and the snippet's own to use.
import enum
E = enum.Enum('E', 'A B')
print(E.A, repr(E.B), E.__module__, E.__qualname__, list(E), E(2), E['B'])
I = enum.IntEnum('I', [('X', 1), ('Y', 2)])
F = enum.Flag('F', 'R W X')
IF = enum.IntFlag('IF', {'A': 1, 'B': 4})
S = enum.StrEnum('S', 'red green')
print(I.X + 1, I.__module__, F.R | F.W, F.__module__, IF.A | IF.B, IF.__module__)
print(S.red == 'red', S.green.upper(), S.__module__, sorted(m.name for m in S))
E.describe = lambda self: f'{self.name}={self.value}'
print(E.A.describe(), E.A is E(1), isinstance(E.B, E))
[m.name for m in F]
