# expect: native
(format(3.14159, '.2f'), format(255, 'x'), format('a', '>3'))
