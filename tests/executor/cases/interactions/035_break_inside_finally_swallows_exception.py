def f():
    for i in range(3):
        try:
            raise ValueError(i)
        finally:
            break
    return 'swallowed'
f()
