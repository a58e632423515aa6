a = {1, 2, 3, 4}
b = {3, 4, 5}
print(sorted(a | b), sorted(a & b), sorted(a - b), sorted(a ^ b), a <= {1, 2, 3, 4, 5}, {1} < a)
a.add(9)
a.discard(100)
a.remove(1)
print(sorted(a), len(a), 3 in a)
fs = frozenset([1, 2])
{fs: 'ok'}[frozenset([2, 1])]
