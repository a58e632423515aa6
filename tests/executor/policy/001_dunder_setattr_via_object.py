# expect: refused Forbidden access to dunder attribute: __setattr__
class Logged:
    def __init__(self):
        self.log = []
    def __setattr__(self, name, value):
        if name != 'log':
            self.log.append(name)
        object.__setattr__(self, name, value)
l = Logged()
l.a = 1
l.b = 2
(l.log, l.a)
