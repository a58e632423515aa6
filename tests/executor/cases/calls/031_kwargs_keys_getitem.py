# expect: native
# A ** argument needs only keys() and __getitem__ (CPython merges it key by key), not items().
class Upper:
    def keys(self):
        return ["a", "b"]

    def __getitem__(self, k):
        print("get", k)
        return k.upper()


def f(**kw):
    return kw


print(f(**Upper()))
print(f(x=1, **Upper()))


class Shrinking:
    """keys() hands out its own list, which __getitem__ empties: no key may outlive it."""

    def __init__(self):
        self.k = ["key" + str(i) for i in range(3)]

    def keys(self):
        return self.k

    def __getitem__(self, k):
        self.k.clear()
        return k * 2


print(f(**Shrinking()))
f(**Upper(), a=0)
