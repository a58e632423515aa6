# expect: native
class A:
    def __len__(self):
        return 3
    def __repr__(self):
        return 'A()'
(len(A()), repr(A()), str(A()))
