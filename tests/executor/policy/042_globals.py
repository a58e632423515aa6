# expect: refused Forbidden function evaluation: 'globals'
globals()
