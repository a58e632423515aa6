# imports: functools
# expect: refused attribute names must be plain str
# A str subclass could fake its hash and == to match '__globals__' in CPython's lookup.
import functools
class S(str):
    def __hash__(self):
        return hash('__globals__')
    def __eq__(self, other):
        return True
def f():
    pass
def g():
    pass
functools.update_wrapper(g, f, assigned=(S('name'),), updated=())
