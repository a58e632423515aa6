# imports: copy
# expect: logs copied: True 7
# copy.copy(x) asks the class: getattr(type(x), '__copy__', None). A metaclass's __getattr__
# answers lookups on its classes, so a snippet metaclass answering __copy__ had copy call what it
# answered. The metaclass is a snippet class like any other: __getattr__ is not asked for it.
import copy
class M(type):
    def __getattr__(cls, name):
        if name == '__copy__':
            def cp(obj):
                raise RuntimeError('copy hook ran')
            return cp
        raise AttributeError(name)
class K(metaclass=M):
    def __init__(self):
        self.n = 7
c = copy.copy(K())
print('copied:', type(c) is K, c.n)
