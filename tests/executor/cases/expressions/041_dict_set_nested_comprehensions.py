# Dict, set and nested comprehensions, their scopes, walrus, class-body comprehensions.
words = ['apple', 'bob', 'cat', 'apple', 'dog']
print({w: len(w) for w in words if len(w) > 2}, {len(w) for w in words})
print({k: v for k, v in zip('abc', range(3))}, {(i, j) for i in range(2) for j in range(2) if i != j})
m = [[i * j for j in range(3)] for i in range(3)]
print(m, [x for row in m for x in row if x % 2 == 0])
x = 10
print([x for x in range(3)], x)
print(sorted({w[0]: w for w in words}.items()), dict.fromkeys('ab', 0))
g = (y * 2 for y in range(4))
print(sum(g), list(g))
print([(a, b) for a in range(3) if a for b in range(a)])
print({i: [j for j in range(i)] for i in range(3)}, [n := 5, n + 1])
class C:
    vals = [1, 2, 3]
    doubled = [v * 2 for v in vals]
print(C.doubled)
