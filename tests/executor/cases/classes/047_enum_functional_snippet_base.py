# imports: enum
# A snippet's own Enum subclass (with methods, a str mixin) used functionally, inside a
# function and from a comprehension: every new class is __main__'s, as in a script.
import enum
class Base(enum.Enum):
    def describe(self):
        return f'{self.name}={self.value}'
Sub = Base('Sub', 'P Q')
print(Sub.P.describe(), Sub.__module__, Sub.Q.value)
class Named(str, enum.Enum):
    pass
N = Named('N', [('north', 'n'), ('south', 's')])
print(N.north == 'n', N('s').name, N.__module__)
def make(name, members):
    return enum.Enum(name, members, start=10)
M = make('M', ['ONE', 'TWO'])
kinds = [enum.IntEnum(n, 'a b') for n in ('K1', 'K2')]
print(M.TWO.value, M.__module__, [(k.__name__, k.__module__, int(k.b)) for k in kinds])
U = enum.Enum('U', 'x', module='__main__', qualname='Outer.U')
(U.__module__, U.__qualname__)
