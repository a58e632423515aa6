def g():
    try:
        yield 1
    finally:
        yield 'from finally'
list(g())
