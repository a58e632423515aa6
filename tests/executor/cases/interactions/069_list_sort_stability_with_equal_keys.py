recs = [('b', 1), ('a', 2), ('c', 1), ('d', 2), ('e', 0)]
recs.sort(key=lambda r: r[1])
first = [r[0] for r in recs]
recs.sort(key=lambda r: r[1], reverse=True)
(first, [r[0] for r in recs])
