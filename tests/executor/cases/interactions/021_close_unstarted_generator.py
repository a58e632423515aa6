log = []
def g():
    log.append('started')
    try:
        yield 1
    finally:
        log.append('finally')
it = g()
it.close()
(log, list(it))
