def f(**kw):
    return kw
f(**{'class': 1, 'def': 2, 'with space': 3})
