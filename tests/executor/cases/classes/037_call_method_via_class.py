class A:
    def m(self, x):
        return x + 1
a = A()
(A.m(a, 1), a.m(2), getattr(a, 'm')(3))
