f = lambda *args, sep='-', **kw: sep.join(map(str, args)) + str(sorted(kw))
print(f(1, 2, 3), f(1, sep='+', z=1))
(lambda a, b=2, *c, d, e=5, **f: (a, b, c, d, e, f))(1, d=4)
