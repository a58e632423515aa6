pairs = [(1, [2, 3]), (4, [5, 6])]
out = []
for a, (b, c) in pairs:
    out.append(a + b + c)
for first, *others in [(1, 2, 3), (4,)]:
    out.append((first, others))
out
