try:
    try:
        raise ValueError('a')
    except ValueError as e:
        e.args = ('changed',)
        raise
except ValueError as e2:
    msg = str(e2)
msg
