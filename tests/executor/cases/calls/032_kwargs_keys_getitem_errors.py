# expect: native
# Key by key, as CPython: a non-string key is refused before its value is read.
class Keys:
    def __init__(self, keys):
        self.k = keys

    def keys(self):
        return self.k

    def __getitem__(self, k):
        print("get", k)
        return k


def f(**kw):
    return kw


try:
    f(**Keys([1]))
except TypeError as e:
    print("TypeError", e)
try:
    f(**Keys(["a"]), **Keys(["a"]))
except TypeError as e:
    print("TypeError", e)
f(**{1: 2})
