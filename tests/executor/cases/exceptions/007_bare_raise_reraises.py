def f():
    try:
        raise KeyError('orig')
    except KeyError:
        raise
try:
    f()
except KeyError as e:
    print('reraised', repr(e))
'ok'
