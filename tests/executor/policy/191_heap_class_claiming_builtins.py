# expect: refused Forbidden access to class builtins.E: module builtins is not allowed
# imports: enum
# Builtins' classes pass whatever the profile, but a class made at run time says what its
# maker writes into __module__ (Enum's module=, or a class body): only a class the builtins
# module holds counts as builtins'.
import enum
E = enum.Enum('E', 'A B', module='builtins')
