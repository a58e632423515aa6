def outer():
    x = 'outer'
    def middle():
        def inner():
            nonlocal x
            x = 'inner'
        inner()
        return x
    r = middle()
    return r, x
outer()
