def g():
    try:
        yield 1
        return 'body'
    finally:
        return 'finally'
it = g()
next(it)
try:
    next(it)
except StopIteration as e:
    v = e.value
v
