log = []
class CM:
    def __enter__(self):
        log.append('enter')
    def __exit__(self, *a):
        log.append('exit')
for i in range(3):
    with CM():
        if i == 0:
            continue
        if i == 2:
            break
        log.append('body%d' % i)
log
