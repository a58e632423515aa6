# expect: refused Maximum number of 1000000 iterations in While loop exceeded
class D:
    def __get__(self, obj, objtype=None):
        while True:
            pass
class C:
    d = D()
C().d
