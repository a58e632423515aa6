# expect: native
def g():
    try:
        yield 1
    except GeneratorExit:
        yield 'ignored'
it = g()
next(it)
it.close()
