from collections import deque
graph = {'a': ['b', 'c'], 'b': ['d'], 'c': ['d', 'e'], 'd': ['f'], 'e': ['f'], 'f': []}
def bfs(start, goal):
    prev = {start: None}
    q = deque([start])
    while q:
        node = q.popleft()
        if node == goal:
            break
        for n in graph[node]:
            if n not in prev:
                prev[n] = node
                q.append(n)
    path = []
    while goal is not None:
        path.append(goal)
        goal = prev.get(goal)
    return path[::-1]
print(bfs('a', 'f'))
{n: len(bfs('a', n)) - 1 for n in graph}
