stack = []
for c in '(()())':
    if c == '(':
        stack.append(c)
    else:
        stack.pop()
print('balanced', not stack)
from collections import deque
q = deque([(0, 0)])
seen = {(0, 0)}
while q:
    x, y = q.popleft()
    for nx, ny in ((x + 1, y), (x, y + 1)):
        if nx < 3 and ny < 3 and (nx, ny) not in seen:
            seen.add((nx, ny))
            q.append((nx, ny))
len(seen)
