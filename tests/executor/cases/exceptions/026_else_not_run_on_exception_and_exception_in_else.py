def f(x):
    try:
        v = 1 / x
    except ZeroDivisionError:
        return 'div0'
    else:
        return [][0] if x == 2 else v
print(f(0), f(1))
try:
    f(2)
except IndexError:
    print('from else')
'ok'
