class K:
    n = 'class-level'
    @classmethod
    def who(cls):
        return cls.__name__ + ':' + cls.n
class L(K):
    n = 'sub'
(K().who(), L().who(), L.who())
