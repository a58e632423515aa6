# expect: error ZeroDivisionError
x = 10
y = 0
print('before')
x / y
