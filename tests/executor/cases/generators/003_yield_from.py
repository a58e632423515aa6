def inner():
    yield 1
    yield 2
    return 'inner-result'
def outer():
    r = yield from inner()
    yield r
    yield from range(3, 5)
list(outer())
