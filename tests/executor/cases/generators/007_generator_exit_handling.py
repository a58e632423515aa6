log = []
def g():
    try:
        yield 1
    except GeneratorExit:
        log.append('GeneratorExit')
        raise
it = g()
next(it)
it.close()
log
