# imports: functools
# expect: refused Forbidden while a snippet runs: functools's code setting dunder '__all__' of class C
# As 284, with `assigned` naming another dunder: functools may store __name__ and __wrapped__
# on a class, no other name a class body may not bind. (The snippet's update_wrapper reads
# only names the walk's read check allows, guard.c: a hook's name is refused before
# functools runs.)
import functools

class C:
    pass
class Source:
    pass
src = Source()
src.__all__ = ['a']
functools.update_wrapper(C, src, assigned=('__all__',), updated=())
print(C.__all__)
