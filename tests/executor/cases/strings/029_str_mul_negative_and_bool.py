print('ab' * -1, 'ab' * 0, 'ab' * True, repr('' * 5))
'x' * 2
