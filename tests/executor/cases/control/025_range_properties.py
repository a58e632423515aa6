r = range(2, 20, 3)
print(len(r), r[1], r[-1], 5 in r, 6 in r, r.index(11), list(r[1:3]))
print(range(5) == range(0, 5), range(3))
r.count(8)
