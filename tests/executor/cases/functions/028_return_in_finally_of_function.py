def f():
    try:
        return 'try'
    finally:
        print('finally runs')
f()
