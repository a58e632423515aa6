# expect: native
list(map(getattr, [1, 2.5], ['real', 'imag']))
