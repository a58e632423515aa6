# expect: native
class A:
    pass
A().missing
