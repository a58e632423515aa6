# expect: native
print('go')
a, b, c = (1, 2)
