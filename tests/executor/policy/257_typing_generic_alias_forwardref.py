# imports: functools, typing
# expect: refused Forbidden while a snippet runs: typing's code setting attribute '_evaluate' of class typing.ForwardRef
# What the forwarding reaches: typing.ForwardRef._evaluate replaced by a snippet function, which
# typing.get_type_hints then calls with the namespaces it evaluates annotations in (a module's
# globals among them).
# The walk refuses a store on a typing alias itself (328); library code storing on one
# (functools.update_wrapper's assigned names) still reaches the forwarding.
import functools, typing
def evaluate(self, globalns, localns, recursive_guard):
    return globalns
class Src:
    _evaluate = evaluate
functools.update_wrapper(typing.Annotated[typing.ForwardRef, 0], Src, assigned=('_evaluate',), updated=())
