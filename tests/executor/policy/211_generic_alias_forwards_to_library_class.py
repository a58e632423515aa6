# imports: json, typing
# expect: refused typing's code setting attribute 'item_separator' of class json.encoder.JSONEncoder
# typing's _BaseGenericAlias.__setattr__ forwards a plain name to its origin: typing's code
# does setattr(json.JSONEncoder, 'item_separator', ';'). The walk sees a store on an alias.
import json, typing
typing.Annotated[json.JSONEncoder, 0].item_separator = ';'
print(json.dumps([1, 2], sort_keys=True))
