def f():
    for i in range(3):
        try:
            return i
        finally:
            if i == 0:
                continue
    return 'loop ended'
f()
