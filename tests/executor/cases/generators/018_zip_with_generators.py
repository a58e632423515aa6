def letters():
    yield from 'abc'
def nums():
    yield from range(10)
list(zip(letters(), nums()))
