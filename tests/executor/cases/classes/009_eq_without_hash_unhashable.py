# expect: native
class E:
    def __eq__(self, other):
        return True
{E()}
