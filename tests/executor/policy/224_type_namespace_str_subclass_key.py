# expect: refused its keys must be plain str, not S
# A str subclass key can make its hash and == match a hook's name in CPython's lookup while
# its characters name something else.
class S(str):
    pass
def fin(self):
    print('freed')
T = type('T', (), {S('__del__'): fin})
t = T()
del t
