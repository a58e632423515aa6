x = 5
match x:
    case 1:
        r = 'one'
print('no case matched')
r2 = 'unset'
match [1, 2]:
    case [a, b, c]:
        r2 = 'three'
r2
