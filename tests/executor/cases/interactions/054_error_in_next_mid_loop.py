# expect: native
class Flaky:
    def __init__(self):
        self.i = 0
    def __iter__(self):
        return self
    def __next__(self):
        self.i += 1
        if self.i == 3:
            raise KeyError('flaky at 3')
        return self.i
for v in Flaky():
    print('got', v)
