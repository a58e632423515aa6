# expect: native
def g():
    try:
        yield 1
    finally:
        yield 2
it = g()
next(it)
it.close()
