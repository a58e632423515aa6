# expect: native
def f():
    try:
        return 1
    finally:
        {}['finally-key']
f()
