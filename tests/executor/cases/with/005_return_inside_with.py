log = []
class CM:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        log.append('exit')
def f():
    with CM():
        return 'returned'
(f(), log)
