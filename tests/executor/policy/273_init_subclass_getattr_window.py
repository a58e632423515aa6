# imports: copy
# expect: logs in __init_subclass__: <__main__.K object
# type.__new__ gave the class it made the checking __getattr__ dispatcher only once CPython's
# returned, but CPython calls the bases' __init_subclass__ before that, with the class under
# CPython's own dispatcher: copy.deepcopy(cls()) there asked K's __getattr__ for __deepcopy__
# and returned what it answered. The class is checked as it enters the snippet's hands.
import copy
class Base:
    def __init_subclass__(cls, **kw):
        print('in __init_subclass__:', copy.deepcopy(cls()))
class K(Base):
    def __getattr__(self, name):
        if name == '__deepcopy__':
            return lambda memo: 'snippet answered __deepcopy__'
        raise AttributeError(name)
print('after:', copy.deepcopy(K()))
