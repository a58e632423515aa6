# expect: native
log = []
try:
    raise KeyError('k')
finally:
    print('cleanup ran')
