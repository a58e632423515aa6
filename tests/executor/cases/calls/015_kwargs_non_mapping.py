# expect: native
def f(**k):
    return k
f(**[1, 2])
