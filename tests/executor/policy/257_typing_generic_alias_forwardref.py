# imports: functools, typing, dataclasses
# expect: refused Forbidden while a snippet runs: typing's code setting attribute '_evaluate' of class typing.ForwardRef
# What the forwarding reaches: typing.ForwardRef._evaluate replaced by a snippet function, which
# typing.get_type_hints then calls with the namespaces it evaluates annotations in (a module's
# globals among them).
# The walk refuses a store on a typing alias itself (328), and functools.update_wrapper
# writes into none (351); library code storing on one (a snippet dataclass's __init__ run
# with the alias as self) still reaches the forwarding.
import functools, typing, dataclasses
def evaluate(self, globalns, localns, recursive_guard):
    return globalns
class Src:
    _evaluate = evaluate
@dataclasses.dataclass
class Setter:
    _evaluate: object
Setter.__init__(typing.Annotated[typing.ForwardRef, 0], Src._evaluate)
