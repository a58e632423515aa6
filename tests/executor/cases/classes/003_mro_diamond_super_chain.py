log = []
class A:
    def go(self):
        log.append('A')
class B(A):
    def go(self):
        log.append('B')
        super().go()
class C(A):
    def go(self):
        log.append('C')
        super().go()
class D(B, C):
    def go(self):
        log.append('D')
        super().go()
D().go()
print([k.__name__ for k in D.mro()])
log
