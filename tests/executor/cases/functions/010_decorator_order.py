order = []
def mk(name):
    order.append('make ' + name)
    def d(fn):
        order.append('apply ' + name)
        return fn
    return d
@mk('a')
@mk('b')
def f():
    pass
order
