name = 'global'
def f():
    name = 'local'
    return name
(f(), name)
