# imports: typing, dataclasses, json, pprint
# The neighbour of 341: typing's get_type_hints and dataclasses read the namespace of the
# module a class was made in, and a module's own code its own, as in CPython.
import typing, dataclasses, json, pprint
@dataclasses.dataclass
class P:
    x: int
    y: typing.List[int] = dataclasses.field(default_factory=list)
class Q:
    a: int
    b: P
print(P(1), typing.get_type_hints(Q), pprint.pformat({'k': [1, 2]}), json.dumps(json.loads('[1]')))
