# expect: refused Maximum number of 1000000 iterations in While loop exceeded
# CPython calls __eq__ during the dict lookup; the while budget holds there, and neither the
# lookup nor `except BaseException` can swallow the refusal.
class K:
    def __hash__(self):
        return 1
    def __eq__(self, other):
        while True:
            pass
d = {K(): 1}
try:
    d[K()]
except BaseException:
    print('swallowed')
'after'
