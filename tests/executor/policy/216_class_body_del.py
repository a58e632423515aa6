# expect: refused Forbidden definition of dunder __del__ in class K
# __del__ runs whenever CPython frees the object: inside any Py_DECREF of the executor's own C
# code or of a library's, after the run, at the worker's teardown. A snippet's class may not
# define it (class_dunders.c).
class K:
    def __del__(self):
        print('freed')
k = K()
del k
