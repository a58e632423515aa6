# expect: native
'abc'.index('z')
