print('a-b_c d'.split('-'), 'AbC'.lower().upper(), 'abc'[::-1].upper(), 'x,y'.split(',')[::-1])
print('hello world'.title(), "they're".title(), '  x '.strip() or 'empty')
print('Ab12'.lower().islower(), 'line\n'.rstrip('\n'), 'a'.join('xyz'))
'%s' % ((1, 2),)
