# expect: refused Maximum number of 1000000 iterations in While loop exceeded
class D:
    def __set_name__(self, owner, name):
        while True:
            pass
class C:
    d = D()
