# imports: functools, json, typing, dataclasses
# expect: refused typing's code setting attribute 'item_separator' of class json.encoder.JSONEncoder
# typing's _BaseGenericAlias.__setattr__ forwards a plain name to its origin: typing's code
# does setattr(json.JSONEncoder, 'item_separator', ';'). The walk sees a store on an alias.
# The walk refuses a store on a typing alias itself (328), and functools.update_wrapper
# writes into none (351); library code storing on one (a snippet dataclass's __init__ run
# with the alias as self) still reaches the forwarding.
import functools, json, typing, dataclasses
class Src:
    item_separator = ';'
@dataclasses.dataclass
class Setter:
    item_separator: object
Setter.__init__(typing.Annotated[json.JSONEncoder, 0], Src.item_separator)
print(json.dumps([1, 2], sort_keys=True))
