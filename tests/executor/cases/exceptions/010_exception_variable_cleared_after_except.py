try:
    raise ValueError('x')
except ValueError as err:
    msg = str(err)
try:
    err
except NameError:
    print('err was deleted')
msg
