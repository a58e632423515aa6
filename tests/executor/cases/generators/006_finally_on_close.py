log = []
def g():
    try:
        yield 1
        yield 2
    finally:
        log.append('cleanup')
it = g()
next(it)
it.close()
print(log)
for x in g():
    break
log
