values = iter([3, 2, 1, 0, 5])
got = list(iter(lambda: next(values), 0))
(got, next(values))
