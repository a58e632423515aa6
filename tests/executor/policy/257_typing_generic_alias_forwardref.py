# imports: typing
# expect: refused Forbidden while a snippet runs: typing's code setting attribute '_evaluate' of class typing.ForwardRef
# What the forwarding reaches: typing.ForwardRef._evaluate replaced by a snippet function, which
# typing.get_type_hints then calls with the namespaces it evaluates annotations in (a module's
# globals among them).
import typing
def evaluate(self, globalns, localns, recursive_guard):
    return globalns
typing.Annotated[typing.ForwardRef, 0]._evaluate = evaluate
