def f(x, acc=[]):
    acc.append(x)
    return acc
print(f(1), f(2), f(3, []), f(4))
'defaults shared'
