def f():
    x = 1
def g():
    return
print(f(), g())
f()
