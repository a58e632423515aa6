# expect: native
print('parsing')
int('12x')
