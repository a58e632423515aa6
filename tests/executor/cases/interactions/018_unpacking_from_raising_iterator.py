# expect: native
class Bad:
    def __iter__(self):
        return self
    def __next__(self):
        raise ValueError('iteration failed')
a, b = Bad()
