# imports: dataclasses, functools, typing
# expect: refused typing's code setting attribute 'name' of class dataclasses.Field
# Now refused earlier: library code may not set attributes of another module or library class
# (guard_store.c); the audit hook's check below stays as the backstop.
# typing's _BaseGenericAlias.__setattr__ forwards non-dunder names to its __origin__:
# typing.Annotated[dataclasses.Field, 0].name = v is setattr(dataclasses.Field, 'name', v) done
# by typing's code. The walk sees an assignment to an instance, which it allows. Same escape as
# 201 after that.
# The walk refuses a store on a typing alias itself (328), and functools.update_wrapper
# writes into none (351); library code storing on one (a snippet dataclass's __init__ run
# with the alias as self) still reaches the forwarding.
import dataclasses, functools, typing
names = iter(['x', 'x', 'x', 'x', "__import__('os').getpid()"] + ['x'] * 50)
class Src:
    name = property(functools.partial(next, names), {}.get)
@dataclasses.dataclass
class Setter:
    name: object
Setter.__init__(typing.Annotated[dataclasses.Field, 0], Src.name)
@dataclasses.dataclass(repr=False, eq=False, match_args=False)
class C:
    "doc"
    x: int
print('escaped, pid', C(0).x)
