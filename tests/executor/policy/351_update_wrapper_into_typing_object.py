# imports: typing, functools
# expect: refused functools.update_wrapper/wraps cannot write into a typing object
# Case 328 (typing.Union._getitem = g, refused by the walk) done by functools' setattr instead:
# update_wrapper refused only a module or a library class as the wrapper, and the store on
# typing's special form was made before its AttributeError on __wrapped__. Every later
# Optional[...] and Union[...] answered the snippet's function. An alias of Union forwarded the
# store to it from typing's code. update_wrapper writes into no typing object (case 358).
import typing, functools
def g(self, params):
    return 'patched'
class Src:
    pass
s = Src()
s._getitem = g
alias = type(typing.List[int])(typing.Union, (int,))
try:
    functools.update_wrapper(alias, s, assigned=('_getitem',), updated=())
except Exception as e:
    print('alias of Union:', e)
functools.update_wrapper(typing.Union, s, assigned=('_getitem',), updated=())
