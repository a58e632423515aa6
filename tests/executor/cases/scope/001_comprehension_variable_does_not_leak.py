x = 'outer'
vals = [x for x in range(3)]
print(x, vals)
d = {x: x for x in 'ab'}
s = {x for x in (1,)}
x
