# expect: native
class A:
    'doc of A'
    def __init__(self):
        self.v = 1
def f():
    pass
(A.__name__, A.__doc__, f.__name__, A().__init__ is not None)
