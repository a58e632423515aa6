def outer():
    v = 1
    def kill():
        nonlocal v
        del v
    kill()
    try:
        return v
    except NameError as e:
        return type(e).__name__
outer()
