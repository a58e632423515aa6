def tag(label):
    def deco(fn):
        def wrapper(self, *a):
            return label + ':' + str(fn(self, *a))
        return wrapper
    return deco
class Svc:
    factor = 3
    @tag('scaled')
    def scale(self, v):
        return v * self.factor
    @staticmethod
    @tag('static')
    def s(self_like, v):
        return v
(Svc().scale(2), Svc.s(None, 5))
