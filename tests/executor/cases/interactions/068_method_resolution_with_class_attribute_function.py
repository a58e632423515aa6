def external(self):
    return 'external:' + type(self).__name__
class K:
    method = external
    lam = lambda self: 'lambda'
    plain_value = staticmethod(len)
(K().method(), K().lam(), K.plain_value([1, 2]))
