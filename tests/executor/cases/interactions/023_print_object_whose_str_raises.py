# expect: native
class S:
    def __str__(self):
        raise RuntimeError('str failed')
print('before')
print(S())
