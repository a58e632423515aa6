def deco(fn):
    def wrapper(*a, **k):
        return ('wrapped', fn(*a, **k))
    return wrapper
def param_deco(tag):
    def d(fn):
        def w(*a):
            return tag + str(fn(*a))
        return w
    return d
@deco
def add(a, b):
    return a + b
@param_deco('<')
@param_deco('>')
def ident(x):
    return x
print(add(1, 2), ident(5))
add(b=3, a=4)
