# expect: native
class Weird:
    def __bool__(self):
        return 1
if Weird():
    pass
