# expect: native
('{0.real}'.format(2 + 3j), '{0[1]}'.format('xy'), '{a}{b!r}'.format(a=1, b='2'))
