# imports: enum, typing
# Each snippet of a session stands on its own __main__ frame: classes made by the functional
# APIs, by type() and by a snippet function called back from C code are __main__'s in every
# snippet, and a class from one snippet is used in the next.
import enum, typing
Color = enum.Enum('Color', 'RED GREEN')
T = typing.TypeVar('T')
print(Color.RED, Color.__module__, type('X', (), {}).__module__, T.__module__)
# ---
Size = enum.IntEnum('Size', 'S M L')
made = list(map(lambda n: enum.Enum(n, 'a').__module__, ['P', 'Q']))
print(Color.GREEN.value, Size.L > Size.S, Size.__module__, made)
def gen():
    yield enum.Flag('Perm', 'R W').__module__
g = gen()
# ---
print(next(g), [c.name for c in Color], Size(2))
