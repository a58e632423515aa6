# imports: copy
# expect: logs in __set_name__: <__main__.J object
# As 273, through a namespace value's __set_name__, which CPython calls with the new class
# (the owner) before type.__new__ returns.
import copy
class D:
    def __set_name__(self, owner, name):
        print('in __set_name__:', copy.deepcopy(owner()))
class J:
    d = D()
    def __getattr__(self, name):
        if name == '__deepcopy__':
            return lambda memo: 'snippet answered __deepcopy__'
        raise AttributeError(name)
print('after:', copy.deepcopy(J()))
