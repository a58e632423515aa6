class A:
    def __eq__(self, o):
        return NotImplemented
a = A()
(a == a, a == A(), a != a, a in [a], A() in [a])
