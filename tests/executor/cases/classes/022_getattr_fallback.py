class Dyn:
    real = 1
    def __getattr__(self, name):
        return 'dyn:' + name
d = Dyn()
(d.real, d.anything, getattr(d, 'other'), getattr(d, 'real', 0))
