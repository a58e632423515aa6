log = []
class Box:
    def __init__(self):
        self.d = {'k': 1}
    def __getitem__(self, k):
        log.append('get ' + k)
        return self.d[k]
    def __setitem__(self, k, v):
        log.append('set %s=%r' % (k, v))
        self.d[k] = v
def key():
    log.append('key()')
    return 'k'
def box():
    log.append('box()')
    return b
b = Box()
box()[key()] += 5
log
