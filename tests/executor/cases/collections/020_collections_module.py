import collections
c = collections.Counter('abracadabra')
print(c.most_common(2), c['a'], c['z'])
dd = collections.defaultdict(list)
for k, v in [('a', 1), ('b', 2), ('a', 3)]:
    dd[k].append(v)
print(dict(dd))
dq = collections.deque([1, 2, 3], maxlen=3)
dq.append(4)
dq.appendleft(0)
print(list(dq))
Point = collections.namedtuple('Point', ['x', 'y'])
p = Point(1, y=2)
print(p, p.x + p.y, p._replace(x=5), p._asdict())
od = collections.OrderedDict(a=1)
od['b'] = 2
od.move_to_end('a')
list(od)
