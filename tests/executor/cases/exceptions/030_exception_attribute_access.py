try:
    int('abc')
except ValueError as e:
    err = e
(type(err).__name__, str(err), err.args[0])
