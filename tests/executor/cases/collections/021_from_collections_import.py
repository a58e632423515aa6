from collections import Counter, deque
from collections import defaultdict as dd
cnt = Counter([1, 1, 2])
q = deque()
q.extend('ab')
q.rotate(1)
d = dd(int)
d['x'] += 1
print(cnt, list(q), dict(d))
cnt.total()
