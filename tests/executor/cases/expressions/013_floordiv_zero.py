# expect: native
print('start')
try:
    1 // 0
except ZeroDivisionError as e:
    print('caught', e)
try:
    1.0 % 0
except ZeroDivisionError as e:
    print('caught', e)
10 % 3
