# imports: functools
# expect: refused Forbidden access to dunder attribute: __globals__
# wraps() returns partial(update_wrapper, ...) whose keywords dict stays mutable: the names are
# checked when the partial is called, not only when it is made.
import functools, random
box = []
class W:
    def __setattr__(self, name, value):
        box.append(value)
p = functools.wraps(random.choice)
p.keywords['assigned'] = ('__globals__',)
p(W())
