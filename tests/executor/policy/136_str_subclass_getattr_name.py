# expect: refused 'int' object has no attribute 'real_'
# A str subclass faking hash and == of '__class__' reaches the lookup as the plain str it is.
class S(str):
    def __hash__(self):
        return hash('__class__')
    def __eq__(self, other):
        return True
getattr(1, S('real_'))
