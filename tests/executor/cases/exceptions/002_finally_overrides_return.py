def f():
    try:
        return 'try'
    finally:
        return 'finally'
def g():
    try:
        raise ValueError('lost')
    finally:
        return 'swallowed'
(f(), g())
