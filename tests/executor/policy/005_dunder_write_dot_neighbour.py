# expect: native
class C:
    pass
c = C()
c.a = 1
c.a += 1
c.a
