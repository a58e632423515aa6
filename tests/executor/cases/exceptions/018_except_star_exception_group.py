try:
    raise ExceptionGroup('group', [ValueError('a'), TypeError('b'), ValueError('c')])
except* ValueError as eg:
    print('values', [str(e) for e in eg.exceptions])
except* TypeError as eg:
    print('types', [str(e) for e in eg.exceptions])
'handled'
