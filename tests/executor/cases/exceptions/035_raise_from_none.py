try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise ValueError('clean') from None
except ValueError as e:
    print('ValueError', e)
'ok'
