# expect: refused Forbidden definition of dunder __del__ in class T
# C code the snippet calls can call type() with three arguments where the walk sees no call:
# map(type, ...). The namespace is checked as the snippet's all the same.
def fin(self):
    print('freed')
T = list(map(type, ['T'], [()], [{'__del__': fin}]))[0]
t = T()
del t
