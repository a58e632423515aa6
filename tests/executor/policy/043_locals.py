# expect: refused Forbidden function evaluation: 'locals'
locals()
