# throw() into a generator suspended in yield from passes its own arguments on to the
# delegate's throw, as given (a type stays a type, a value stays separate), as CPython does.
class D:
    def __iter__(self):
        return self
    def __next__(self):
        return 1
    def throw(self, *args):
        print('throw args', [type(a).__name__ for a in args])
        raise StopIteration('done')
def g():
    r = yield from D()
    yield r
it = g(); next(it)
print(it.throw(ValueError))
it = g(); next(it)
print(it.throw(ValueError('x')))
it = g(); next(it)
print(it.throw(ValueError, 'v'))
def inner():
    try:
        yield 1
    except KeyError as e:
        yield 'inner caught ' + repr(e)
def outer():
    yield from inner()
o = outer(); next(o)
print(o.throw(KeyError, 'k'))
try:
    o.throw(TypeError)
except TypeError as e:
    print('propagated', repr(e))
