def gen():
    yield 1
    yield 2
def f(*a, **k):
    return a, k
f(*gen(), *(x for x in 'ab'), **{'k': 1})
