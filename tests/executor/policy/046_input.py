# expect: refused Forbidden function evaluation: 'input'
input('name? ')
