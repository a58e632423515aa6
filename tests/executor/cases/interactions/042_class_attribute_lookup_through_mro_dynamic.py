class A:
    x = 'A'
class B(A):
    pass
b = B()
r1 = b.x
A.x = 'changed'
r2 = b.x
B.x = 'B own'
(r1, r2, b.x, A.x)
