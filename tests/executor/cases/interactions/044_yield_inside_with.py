log = []
class CM:
    def __enter__(self):
        log.append('enter')
    def __exit__(self, *a):
        log.append('exit')
def g():
    with CM():
        yield 1
        yield 2
it = g()
log.append(next(it))
it.close()
log
