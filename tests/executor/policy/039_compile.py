# expect: refused Forbidden function evaluation: 'compile'
compile('1', 'f', 'eval')
