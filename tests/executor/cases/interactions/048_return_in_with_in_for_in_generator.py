log = []
class CM:
    def __enter__(self):
        log.append('enter')
    def __exit__(self, *a):
        log.append('exit')
def g():
    for i in range(5):
        with CM():
            if i == 2:
                return
            yield i
(list(g()), log)
