log = []
class CM:
    def __init__(self, name):
        self.name = name
    def __enter__(self):
        log.append('enter ' + self.name)
        return self.name.upper()
    def __exit__(self, et, ev, tb):
        log.append('exit ' + self.name + ' ' + str(et.__name__ if et else None))
        return False
with CM('a') as v:
    log.append('body ' + v)
log
