try:
    try:
        raise KeyError('a')
    except KeyError:
        raise ValueError('b')
except ValueError as e:
    print('outer got', e)
'ok'
