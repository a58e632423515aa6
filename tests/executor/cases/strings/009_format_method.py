print('{} and {}'.format('a', 'b'), '{1}{0}'.format('x', 'y'), '{name}!'.format(name='Bo'))
print('{:>5}|{:<5}|{:^5}|'.format(1, 2, 3), '{0[0]}-{0[1]}'.format(['p', 'q']), '{d[k]}'.format(d={'k': 'v'}))
'{:.3}'.format('abcdef')
