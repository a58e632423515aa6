# imports: dataclasses, json
# expect: refused setting attribute 'item_separator' of class json.encoder.JSONEncoder
# The same generated __init__ with a library class as self: json.JSONEncoder.item_separator.
import dataclasses, json
@dataclasses.dataclass
class N:
    item_separator: str
list(map(N.__init__, [json.JSONEncoder], [';']))
print(json.dumps([1, 2], sort_keys=True))
