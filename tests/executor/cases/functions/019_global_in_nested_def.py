def outer():
    def inner():
        global g
        g = 'set by inner'
    inner()
outer()
g
