log = []
class O:
    pass
o = O()
o.n = 1
def get():
    log.append('get')
    return o
get().n *= 7
(o.n, log)
