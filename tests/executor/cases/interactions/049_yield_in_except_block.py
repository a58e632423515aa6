def g():
    try:
        raise ValueError('inner')
    except ValueError as e:
        yield 'handling ' + str(e)
        yield 'still handling'
    yield 'after'
list(g())
