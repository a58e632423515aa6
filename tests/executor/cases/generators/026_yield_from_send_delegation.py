def inner():
    a = yield 'i1'
    b = yield 'i2:' + str(a)
    return a + b
def outer():
    total = yield from inner()
    yield 'total:' + str(total)
g = outer()
print(next(g), g.send(1), g.send(2))
'ok'
