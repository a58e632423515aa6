class CM:
    def __enter__(self):
        return (1, [2, 3])
    def __exit__(self, *a):
        return False
with CM() as (a, [b, c]):
    pass
(a, b, c)
