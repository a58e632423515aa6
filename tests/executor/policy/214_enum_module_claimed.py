# expect: refused enum's code setting attribute 'A' of class builtins.E
# imports: enum
# A class a library makes at run time says what its maker was told to write into __module__:
# enum's functional API with module='builtins' (or 'json') makes a class of another module's,
# and enum's own code setting its members there is another package's code changing it.
import enum
E = enum.Enum('E', 'A B', module='builtins')
