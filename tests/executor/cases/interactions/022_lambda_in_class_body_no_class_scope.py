# expect: error NameError
class C:
    k = 10
    f = lambda self: k
C().f()
