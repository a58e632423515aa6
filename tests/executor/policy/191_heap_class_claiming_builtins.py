# expect: refused Forbidden access to class builtins.E: module builtins is not allowed
# Builtins' classes pass whatever the profile, but a class made at run time says what its
# maker writes into __module__ (Enum's module=, type()'s namespace, a class body): only a class
# the builtins module holds counts as builtins'. (enum.Enum('E', 'A B', module='builtins') is
# now refused before that: enum's code may not set attributes of a class of builtins', 214.)
E = type('E', (), {'__module__': 'builtins'})
