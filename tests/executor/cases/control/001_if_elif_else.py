def classify(n):
    if n < 0:
        return 'neg'
    elif n == 0:
        return 'zero'
    elif n < 10:
        return 'small'
    else:
        return 'big'
print([classify(n) for n in (-5, 0, 3, 50)])
x = 7
if x:
    print('truthy')
if not []:
    print('empty list is falsy')
classify(10)
