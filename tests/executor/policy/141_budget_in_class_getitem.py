# expect: refused Maximum number of 1000000 iterations in While loop exceeded
class C:
    def __class_getitem__(cls, item):
        while True:
            pass
C[int]
