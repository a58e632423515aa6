d = {'n': 1}
d['n'] += 1
lst = [1, 2]
lst[0] *= 10
lst += [3]
s = 'ab'
s += 'c'
t = (1,)
t += (2,)
print(d, lst, s, t)
class C: pass
c = C()
c.v = 5
c.v -= 1
c.v
