d = {}
d['a'] = 1
d['b'] = d['a'] + 1
lst = [0] * 5
lst[0] = 'first'
lst[-1] = 'last'
lst[1:3] = ['x', 'y', 'z']
print(d, lst)
m = [[0] * 3 for _ in range(2)]
m[1][2] = 9
m
