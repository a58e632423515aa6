# expect: refused Forbidden access to module namespace helper: _convert_
# imports: enum
# Enum._convert_(name, module, filter) reads sys.modules[module].__dict__ for any module name,
# makes a class of what it finds (here the real exec, in a class whose __module__ is
# builtins) and writes into that namespace. Refused by name on every object.
import enum
class E(enum.Enum):
    pass
B = E._convert_('PfB', 'builtins', lambda n: n in ('exec',))
