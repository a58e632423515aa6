log = []
def g():
    try:
        yield 1
        return
    finally:
        log.append('fin')
print(list(g()))
log
