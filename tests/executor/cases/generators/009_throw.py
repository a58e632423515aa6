def g():
    while True:
        try:
            yield 'ready'
        except ValueError as e:
            yield 'caught ' + str(e)
it = g()
print(next(it), it.throw(ValueError('boom')), next(it))
it.throw(ValueError, 'again') if False else 'skip-legacy'
