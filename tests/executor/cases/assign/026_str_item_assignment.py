# expect: native
s = 'abc'
s[0] = 'x'
