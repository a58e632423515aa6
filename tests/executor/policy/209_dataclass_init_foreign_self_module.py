# imports: dataclasses, json
# expect: refused setting attribute 'dumps' of module json
# A dataclass's generated __init__ is `self.dumps = dumps` run by CPython: called with a module
# as self (through map, which the walk's call checks do not look into) it writes the module's
# namespace.
import dataclasses, json
@dataclasses.dataclass
class N:
    dumps: object
list(map(N.__init__, [json], [lambda *a, **k: 'patched']))
print(json.dumps([1]))
