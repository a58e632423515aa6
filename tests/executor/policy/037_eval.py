# expect: refused Forbidden function evaluation: 'eval'
eval('1 + 1')
