def f():
    factor = 3
    return [i * factor for i in range(3)], {k: factor for k in 'a'}
f()
