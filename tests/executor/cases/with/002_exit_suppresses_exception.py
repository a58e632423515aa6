class Suppress:
    def __init__(self, *types):
        self.types = types
    def __enter__(self):
        return self
    def __exit__(self, et, ev, tb):
        return et is not None and issubclass(et, self.types)
with Suppress(KeyError):
    {}['missing']
    print('not reached')
print('after suppressed')
try:
    with Suppress(KeyError):
        [][0]
except IndexError:
    print('IndexError passed through')
'ok'
