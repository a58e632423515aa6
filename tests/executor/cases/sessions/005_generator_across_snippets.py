def gen():
    for i in range(5):
        yield i * i
g = gen()
next(g)
# ---
next(g)
# ---
list(g)
