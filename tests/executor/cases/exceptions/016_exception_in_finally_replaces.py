def f():
    try:
        raise ValueError('first')
    finally:
        raise TypeError('second')
try:
    f()
except Exception as e:
    print(type(e).__name__, e)
'ok'
