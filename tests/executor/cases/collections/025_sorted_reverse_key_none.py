print(sorted([3, 1, 2], reverse=True), sorted('cba'), sorted({3: 'a', 1: 'b'}), sorted([[2, 1], [1, 2]]))
print(sorted([-3, 2, -1], key=abs), list(reversed([1, 2, 3])))
sorted([('b', 2), ('a', 2), ('c', 1)], key=lambda t: t[1])
