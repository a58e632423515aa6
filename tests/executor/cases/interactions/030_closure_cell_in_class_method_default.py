def outer():
    x = 'cell'
    class C:
        def m(self, v=x):
            return v + '/' + x
    return C().m()
outer()
