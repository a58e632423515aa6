# expect: error RecursionError
# Recursion through a dunder CPython calls (__lt__ in sort) ends in RecursionError, as natively.
class K:
    def __lt__(self, other):
        return K() < K()
sorted([K(), K()])
