import queue
q = queue.PriorityQueue()
for p, item in [(3, 'c'), (1, 'a'), (2, 'b')]:
    q.put((p, item))
out = []
while not q.empty():
    out.append(q.get()[1])
lq = queue.LifoQueue()
lq.put(1)
lq.put(2)
print(out, lq.get(), lq.qsize())
out
