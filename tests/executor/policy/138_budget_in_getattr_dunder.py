# expect: refused Maximum number of 1000000 iterations in While loop exceeded
class A:
    def __getattr__(self, name):
        while True:
            pass
try:
    hasattr(A(), 'x')
except BaseException:
    pass
