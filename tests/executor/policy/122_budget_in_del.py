# expect: refused Maximum number of 1000000 iterations in While loop exceeded
# __del__ runs when CPython drops the object; CPython reports and drops its exception, but the
# refusal sticks: the next statement fails with it.
class K:
    def __del__(self):
        while True:
            pass
k = K()
del k
'after'
