class D:
    def __get__(self, obj, owner):
        return ('instance' if obj is not None else 'class', owner.__name__)
class C:
    d = D()
(C.d, C().d)
