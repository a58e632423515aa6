# imports: copy
# expect: logs copied: K {'n': 7}
# copy.copy rebuilds the object through object.__reduce_ex__: copyreg asks the object for
# __getnewargs_ex__, copy._reconstruct asks the new one hasattr(y, '__setstate__') and calls it
# with the state. Both miss normal lookup and reached the snippet's __getattr__ (here a lambda
# bound in the class body, answering every name). They get AttributeError now, so copy writes
# the state into the new object itself.
import copy
def answer(name):
    if name == '__setstate__':
        def setstate(state):
            raise RuntimeError('setstate hook ran with ' + repr(state))
        return setstate
    if name == '__getnewargs_ex__':
        def newargs():
            raise RuntimeError('getnewargs_ex hook ran')
        return newargs
    raise AttributeError(name)
class K:
    __getattr__ = lambda self, name: answer(name)
    def __init__(self):
        self.n = 7
c = copy.copy(K())
print('copied:', type(c).__name__, {'n': c.n})
