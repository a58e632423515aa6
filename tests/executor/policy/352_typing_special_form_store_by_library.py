# imports: typing, dataclasses
# expect: logs direct: Forbidden while a snippet runs: setting attribute '_getitem' of typing's special form typing.Union
# typing's aliases pass a store of a plain name on to their origin, which for Optional[int] is
# the special form Union, shared by every user of typing. A snippet dataclass's __init__,
# called with the alias as self, stored the snippet's function as Union._getitem: every
# Union[...] after it answered 'patched'. No code sets a special form's attributes while a
# snippet runs (guard_typing.c): not with Union itself as self, nor object.__setattr__ (a
# frozen dataclass's __init__); an alias passes no store on to it (case 359). Union still
# works.
import typing, dataclasses
def g(self, params):
    return 'patched'
@dataclasses.dataclass
class D:
    _getitem: object
try:
    D.__init__(typing.Optional[int], g)
except Exception as e:
    print('through the alias:', e)
try:
    D.__init__(typing.Union, g)
except Exception as e:
    print('direct:', e)
@dataclasses.dataclass(frozen=True)
class F:
    _getitem: object
try:
    F.__init__(typing.Union, g)
except TypeError as e:
    print('frozen:', e)
print(typing.Union[int, str])
