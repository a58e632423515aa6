def outer():
    v = 0
    def setter(x):
        nonlocal v
        v = x
    def getter():
        return v
    setter(5)
    a = getter()
    setter(7)
    return a, getter(), v
outer()
