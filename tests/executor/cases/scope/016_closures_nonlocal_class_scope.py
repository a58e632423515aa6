# Closures over loop variables, nonlocal, class-body names (not closures), generator
# closures, send, UnboundLocalError, global.
def outer():
    fns = []
    for i in range(3):
        def f(j=i):
            return i, j
        fns.append(f)
    return [f() for f in fns]
print(outer())
def make():
    x = 1
    def get():
        return x
    def set_(v):
        nonlocal x
        x = v
    return get, set_
g, s = make(); s(42); print(g())
class K:
    y = 5
    def m(self):
        return y
    z = [y for _ in range(2)] if False else None
try:
    K().m()
except NameError as e:
    print('class names are not closures:', type(e).__name__)
y = 'global y'
print(K().m())
def gen_closure():
    total = 0
    def add(v):
        nonlocal total
        total += v
        yield total
    return add
a = gen_closure()
print(list(a(3)), list(a(4)))
def counter():
    c = 0
    while True:
        c += 1
        inc = yield c
        if inc:
            c += inc
cg = counter(); print(next(cg), cg.send(10), next(cg))
def shadow():
    try:
        print(undefined_later)
    except NameError as e:
        print(type(e).__name__)
    undefined_later = 1
    return undefined_later
try:
    shadow()
except UnboundLocalError as e:
    print('UnboundLocalError')
x = 0
def glob():
    global x
    x += 1
    return x
print(glob(), glob(), x)
f = lambda *a, k=1, **kw: (a, k, kw)
print(f(1, 2, k=3, z=4), type((lambda: (yield))()).__name__)
