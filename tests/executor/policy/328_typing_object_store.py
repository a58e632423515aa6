# imports: typing
# expect: refused Forbidden assignment to an attribute of typing's internal object
# typing's special forms are made at its import and shared by every user of typing: replacing
# Union's _getitem made every later Union[...], Optional[...] and X | None (typing's own
# included) call the snippet's function and trust its answer.
import typing
def g(self, params):
    return 'patched'
typing.Union._getitem = g
print(typing.Optional[int])
