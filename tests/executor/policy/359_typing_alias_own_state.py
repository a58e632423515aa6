# imports: typing, dataclasses
# expect: logs own: Forbidden while a snippet runs: code of no module setting attribute '_name' of a typing alias
# typing's aliases are cached and shared (typing.List[int] is one object for every caller) and
# set their own state (dunders, _name, _inst, ...) in their __setattr__, passing any other name
# on to their __origin__. A snippet dataclass's __init__ run with the cached alias as self
# rewrote its _name; run with Annotated['Foo', 0] (whose origin is a ForwardRef) it set that
# ForwardRef's _evaluate, which get_type_hints calls with module namespaces. Only typing's own
# code sets an alias's own state while a snippet runs, and a store is passed on only to a
# class. Making and using aliases still works.
import typing, dataclasses
@dataclasses.dataclass
class Own:
    _name: str
@dataclasses.dataclass
class Passed:
    _evaluate: object
try:
    Own.__init__(typing.List[int], 'Evil')
except Exception as e:
    print('own:', e)
try:
    Passed.__init__(typing.Annotated['Foo', 0], print)
except Exception as e:
    print('passed on:', e)
print(typing.List[int], typing.Dict[str, typing.Optional[int]], typing.Annotated['Foo', 0])
