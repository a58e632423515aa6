class A:
    def f(self):
        return 'A'
class B(A):
    def f(self):
        g = lambda: super().f()
        return 'B' + g()
B().f()
