s = 'abc'
t = s.upper()
print(s, t, s is t)
u = s.replace('z', 'y')
print(u == s)
s
