# imports: typing
# expect: refused compiling or running code from a string
# typing evaluates string annotations with CPython's eval: the string is the snippet's code.
import typing
class C:
    x: "__import__('os').getpid()"
typing.get_type_hints(C)
