def apply(fn, *args):
    return fn(*args)
def compose(f, g):
    return lambda x: f(g(x))
inc = lambda x: x + 1
dbl = lambda x: x * 2
print(apply(max, 3, 9, 2), compose(inc, dbl)(5), compose(dbl, inc)(5))
apply(compose(str, abs), -42)
