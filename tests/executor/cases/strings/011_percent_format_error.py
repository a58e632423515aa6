# expect: native
'%d %d' % (1,)
