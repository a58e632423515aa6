# expect: native
try:
    int('x')
except ValueError as e:
    raise RuntimeError('conversion failed') from e
