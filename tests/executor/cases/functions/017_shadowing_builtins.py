def f(list):
    return list * 2
print(f(3))
len = lambda x: 'shadowed'
print(len([1, 2]))
del len
len([1, 2])
