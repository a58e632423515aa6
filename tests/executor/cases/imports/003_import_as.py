import math as m
import collections as c
print(m.tau, c.Counter('aa')['a'])
m.cos(0)
