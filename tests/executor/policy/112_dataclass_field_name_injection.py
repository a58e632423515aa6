# imports: dataclasses
# expect: refused a dataclass field whose name is not an identifier
# dataclasses writes __init__ as source text from the field names and exec's it: a name that
# is not an identifier would be code (here a default value evaluated at definition).
import dataclasses
class D:
    __annotations__ = {"a=__import__('os').getpid()": int}
dataclasses.dataclass(D)
