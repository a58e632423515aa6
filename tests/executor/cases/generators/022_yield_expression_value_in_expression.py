def g():
    x = (yield 1) or 'default'
    yield x
it = g()
print(next(it), next(it))
it2 = g()
next(it2)
it2.send('sent')
