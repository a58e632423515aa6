def f():
    return 'v1'
g = f
# ---
def f():
    return 'v2'
(f(), g())
