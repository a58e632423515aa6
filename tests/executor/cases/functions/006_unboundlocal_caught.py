x = 1
def f():
    try:
        x += 1
    except UnboundLocalError as e:
        return 'unbound: ' + type(e).__name__
    return x
f()
