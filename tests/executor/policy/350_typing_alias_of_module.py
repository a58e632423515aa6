# imports: typing, functools
# expect: refused Forbidden: a typing alias of module typing
# typing's aliases pass reads and stores of their other attributes on to their __origin__ from
# typing's own code, which may set typing's attributes. An alias the snippet made of the typing
# module itself, handed to update_wrapper, set typing.get_origin and typing.callable (which
# typing's protocol checks call) for every library; its reads would answer typing's private
# names. No module is an alias's origin.
import typing, functools
GA = type(typing.List[int])
a = GA(typing, (int,), name='X')
class Src:
    pass
s = Src()
s.callable = lambda x: True
functools.update_wrapper(a, s, assigned=('callable',), updated=())
print(isinstance(3, typing.SupportsInt))
