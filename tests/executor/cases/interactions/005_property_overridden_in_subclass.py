class A:
    @property
    def v(self):
        return 'A.v'
class B(A):
    @property
    def v(self):
        return 'B.v+' + super().v
(A().v, B().v)
