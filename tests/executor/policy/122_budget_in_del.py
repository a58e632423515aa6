# expect: refused Forbidden definition of dunder __del__ in class K
# Now refused earlier: a snippet class may not define __del__ (class_dunders.c), which CPython
# calls at any point an object is freed. Were it defined: CPython reports and drops its
# exception, but the budget's refusal sticks and the next statement fails with it.
class K:
    def __del__(self):
        while True:
            pass
k = K()
del k
'after'
