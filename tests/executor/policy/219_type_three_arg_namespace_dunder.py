# expect: refused Forbidden definition of dunder __del__ in class T
# type(name, bases, ns) binds ns's names as a class body does.
def fin(self):
    print('freed')
T = type('T', (), {'__del__': fin})
t = T()
del t
