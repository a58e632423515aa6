def f():
    return later_defined()
def later_defined():
    return 'found'
f()
