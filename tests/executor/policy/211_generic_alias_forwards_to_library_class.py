# imports: functools, json, typing
# expect: refused typing's code setting attribute 'item_separator' of class json.encoder.JSONEncoder
# typing's _BaseGenericAlias.__setattr__ forwards a plain name to its origin: typing's code
# does setattr(json.JSONEncoder, 'item_separator', ';'). The walk sees a store on an alias.
# The walk refuses a store on a typing alias itself (328); library code storing on one
# (functools.update_wrapper's assigned names) still reaches the forwarding.
import functools, json, typing
class Src:
    item_separator = ';'
functools.update_wrapper(typing.Annotated[json.JSONEncoder, 0], Src, assigned=('item_separator',), updated=())
print(json.dumps([1, 2], sort_keys=True))
