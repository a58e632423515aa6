# imports: typing, dataclasses, functools
# expect: logs refused: Forbidden while a snippet runs: a typing alias passing the store of attribute 'callable' on to an origin that is no class
# A module's own code may set its attributes while a snippet runs, but not when the code is an
# object's __setattr__ passing on a store made on that object. typing's aliases pass stores of
# plain names on to their __origin__: an alias of the typing module itself, made by C code
# (where the walk never sees it, case 350), as self of a snippet dataclass's __init__, set
# typing.callable (which typing's protocol checks call) from typing's own code. The alias now
# passes no store on to anything but a class (guard_typing.c), which refuses this first; the
# module rule ("not from an object's __setattr__") keeps its bite in unit test
# test_text_code_is_no_modules.
import typing, dataclasses, functools
GA = type(typing.List[int])
@dataclasses.dataclass
class D:
    callable: object
def mine(x):
    return True
try:
    list(map(D.__init__, map(functools.partial(GA, name='X'), [typing], [(int,)]), [mine]))
except Exception as e:
    print('refused:', e)
