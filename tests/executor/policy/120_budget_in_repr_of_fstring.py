# expect: refused Reached the max number of operations
class K:
    def __repr__(self):
        n = 0
        for i in range(10 ** 9):
            n += i
        return 'k'
f'{K()!r}'
