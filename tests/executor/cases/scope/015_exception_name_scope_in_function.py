def f():
    e = 'before'
    try:
        raise ValueError
    except ValueError as e:
        pass
    try:
        return e
    except UnboundLocalError:
        return 'e unbound after except'
f()
