# expect: refused Forbidden function evaluation: 'vars'
vars()
