# expect: refused Forbidden function evaluation: 'exec'
exec('x = 1')
