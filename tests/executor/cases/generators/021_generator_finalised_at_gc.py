log = []
def g():
    try:
        yield 1
    finally:
        log.append('finalised')
def use():
    it = g()
    next(it)
use()
log
