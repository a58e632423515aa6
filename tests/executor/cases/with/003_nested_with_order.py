log = []
class CM:
    def __init__(self, n):
        self.n = n
    def __enter__(self):
        log.append('in%d' % self.n)
        return self.n
    def __exit__(self, *a):
        log.append('out%d' % self.n)
with CM(1) as a, CM(2) as b:
    log.append(a + b)
with CM(3):
    with CM(4):
        log.append('inner')
log
